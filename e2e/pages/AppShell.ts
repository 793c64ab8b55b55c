import type { Page } from '@playwright/test';

/** The signed-in top bar: brand, organisation, main navigation and the account menu. */
export class AppShell {
  constructor(private readonly page: Page) {}

  mainNav() {
    return this.page.getByRole('navigation', { name: 'Main' });
  }

  organisation(name: string) {
    return this.page.getByRole('banner').getByText(name, { exact: true });
  }

  accountMenuButton() {
    return this.page.getByRole('button', { name: /^Account menu for / });
  }

  async logOut() {
    await this.accountMenuButton().click();
    await this.page.getByRole('menuitem', { name: 'Log out' }).click();
  }
}
