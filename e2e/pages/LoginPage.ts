import { expect, type Page } from '@playwright/test';

export class LoginPage {
  constructor(private readonly page: Page) {}

  heading() {
    return this.page.getByRole('heading', { name: 'Log in to Headroom' });
  }

  async goto() {
    await this.page.goto('/login');
    await expect(this.heading()).toBeVisible();
  }

  async logIn(email: string, password: string) {
    await this.page.getByLabel('Email').fill(email);
    await this.page.getByLabel('Password').fill(password);
    await this.page.getByRole('button', { name: 'Log in' }).click();
  }

  formError() {
    return this.page.getByRole('alert');
  }
}
