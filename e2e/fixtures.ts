import { randomUUID } from 'node:crypto';
import { test as base } from '@playwright/test';
import { AppShell } from './pages/AppShell';
import { ClustersPage } from './pages/ClustersPage';
import { LoginPage } from './pages/LoginPage';
import { SignupPage, type NewAccount } from './pages/SignupPage';

interface Fixtures {
  signupPage: SignupPage;
  loginPage: LoginPage;
  shell: AppShell;
  clustersPage: ClustersPage;
  /** A fresh, never-used account per test, so runs never collide on a shared database. */
  newAccount: NewAccount;
}

export const test = base.extend<Fixtures>({
  signupPage: async ({ page }, use) => use(new SignupPage(page)),
  loginPage: async ({ page }, use) => use(new LoginPage(page)),
  shell: async ({ page }, use) => use(new AppShell(page)),
  clustersPage: async ({ page }, use) => use(new ClustersPage(page)),
  newAccount: async ({}, use) => {
    const id = randomUUID().slice(0, 8);
    await use({
      fullName: 'Grace Hopper',
      email: `e2e-${Date.now()}-${id}@example.com`,
      password: `pw-${randomUUID()}`,
      organisation: `E2E Org ${id}`,
    });
  },
});

export { expect } from '@playwright/test';
