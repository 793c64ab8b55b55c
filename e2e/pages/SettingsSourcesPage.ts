import { expect, type Page } from '@playwright/test';

/** Settings › Data sources: the AWS and Prometheus lists with their health. */
export class SettingsSourcesPage {
  constructor(private readonly page: Page) {}

  heading() {
    return this.page.getByRole('heading', { name: 'Data sources', level: 1 });
  }

  async openFromMainNav() {
    await this.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await expect(this.heading()).toBeVisible();
  }

  settingsNav() {
    return this.page.getByRole('navigation', { name: 'Settings' });
  }

  async goTo(section: 'Data sources' | 'Members' | 'Invitations' | 'API tokens' | 'Audit log') {
    await this.settingsNav().getByRole('link', { name: section }).click();
  }

  prometheusRow(name: string) {
    return this.page.getByRole('table', { name: 'Prometheus sources' }).getByRole('row', { name: new RegExp(name) });
  }

  async startConnectingAws() {
    await this.page.getByRole('link', { name: 'Connect AWS account' }).click();
  }

  externalId() {
    return this.page.getByLabel('External ID', { exact: true });
  }

  trustPolicy() {
    return this.page.getByLabel('Trust policy', { exact: true });
  }

  async startAddingPrometheus() {
    await this.page.getByRole('link', { name: 'Add Prometheus source' }).click();
  }
}
