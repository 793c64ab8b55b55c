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

  /** The top bar's one button: the account menu, named by the user's name it shows. */
  accountMenuButton() {
    return this.page.getByRole('banner').getByRole('button');
  }

  async logOut() {
    await this.accountMenuButton().click();
    await this.page.getByRole('menuitem', { name: 'Log out' }).click();
  }
}
