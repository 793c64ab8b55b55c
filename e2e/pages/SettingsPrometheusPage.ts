import type { Page } from '@playwright/test';

export interface PrometheusSourceInput {
  name: string;
  baseUrl: string;
  style: 'tiup' | 'operator';
  selector?: string;
}

/** Settings › Add Prometheus source, and a source's own page (test connection, backfill). */
export class SettingsPrometheusPage {
  constructor(private readonly page: Page) {}

  async add(source: PrometheusSourceInput) {
    await this.page.getByLabel('Name', { exact: true }).fill(source.name);
    await this.page.getByLabel('Prometheus URL', { exact: true }).fill(source.baseUrl);
    if (source.style === 'operator') {
      await this.page.getByRole('radio', { name: /TiDB Operator/ }).check();
    } else {
      await this.page.getByRole('radio', { name: /TiUP/ }).check();
      if (source.selector) await this.page.getByLabel('Label selector (optional)', { exact: true }).fill(source.selector);
    }
    await this.page.getByRole('button', { name: 'Add Prometheus source' }).click();
  }

  heading(name: string) {
    return this.page.getByRole('heading', { name, level: 1 });
  }

  async testConnection() {
    await this.page.getByRole('button', { name: 'Test connection' }).click();
  }

  testResult() {
    return this.page.getByRole('region', { name: 'Test result' });
  }

  testMessages() {
    return this.testResult().getByRole('list', { name: 'Messages' });
  }

  backfillState() {
    return this.page.getByText(/^State:/);
  }

  async backToSources() {
    await this.page.getByRole('link', { name: '← Data sources' }).click();
  }
}
