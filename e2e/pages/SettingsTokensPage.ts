import type { Page } from '@playwright/test';

/** Settings › API tokens: create (the token is shown once), list by prefix, revoke. */
export class SettingsTokensPage {
  constructor(private readonly page: Page) {}

  heading() {
    return this.page.getByRole('heading', { name: 'API tokens', level: 1 });
  }

  async create(name: string) {
    await this.page.getByLabel('Token name', { exact: true }).fill(name);
    await this.page.getByRole('button', { name: 'Create token' }).click();
  }

  newToken() {
    return this.page.getByRole('region', { name: 'New API token' });
  }

  tokenValue() {
    return this.newToken().getByLabel('Token value');
  }

  copyButton() {
    return this.newToken().getByRole('button', { name: 'Copy token' });
  }

  row(name: string) {
    return this.page.getByRole('table', { name: 'API tokens' }).getByRole('row', { name: new RegExp(`^${name} `) });
  }
}
