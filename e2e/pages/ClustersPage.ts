import type { Page } from '@playwright/test';

export class ClustersPage {
  constructor(private readonly page: Page) {}

  heading() {
    return this.page.getByRole('heading', { name: 'Clusters', level: 1 });
  }

  emptyState() {
    return this.page.getByRole('region', { name: 'No clusters yet' });
  }

  emptyStateHint() {
    return this.emptyState().getByText('Connect an AWS account and a Prometheus to see your TiKV clusters.');
  }
}
