import { expect, type Page } from '@playwright/test';

export interface NewAccount {
  fullName: string;
  email: string;
  password: string;
  organisation: string;
}

export class SignupPage {
  constructor(private readonly page: Page) {}

  async goto() {
    await this.page.goto('/signup');
    await expect(this.page.getByRole('heading', { name: 'Create your Headroom account' })).toBeVisible();
  }

  async signUp(account: NewAccount) {
    await this.page.getByLabel('Full name (optional)').fill(account.fullName);
    await this.page.getByLabel('Email').fill(account.email);
    await this.page.getByLabel('Password').fill(account.password);
    await this.page.getByLabel('Organisation name').fill(account.organisation);
    await this.page.getByRole('button', { name: 'Create account' }).click();
  }

  /** After sign-up the page says to check the email; the account exists once its link is followed. */
  checkYourEmail() {
    return this.page.getByRole('heading', { name: 'Check your email' });
  }

  async followEmailedLink(pathAndQuery: string) {
    await this.page.goto(pathAndQuery);
  }
}
