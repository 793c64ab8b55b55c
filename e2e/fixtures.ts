import { randomUUID } from 'node:crypto';
import { test as base } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { AppShell } from './pages/AppShell';
import { ClusterPage } from './pages/ClusterPage';
import { ClustersPage } from './pages/ClustersPage';
import { LoginPage } from './pages/LoginPage';
import { SignupPage, type NewAccount } from './pages/SignupPage';

interface Fixtures {
  signupPage: SignupPage;
  loginPage: LoginPage;
  shell: AppShell;
  clustersPage: ClustersPage;
  clusterPage: ClusterPage;
  /** The demo organisation's login that `headroom serve` seeds (services/demo.py ensure_demo_account). */
  demoLogin: { email: string; password: string };
  /** A fresh, never-used account per test, so runs never collide on a shared database. */
  newAccount: NewAccount;
}

export const test = base.extend<Fixtures>({
  signupPage: async ({ page }, use) => use(new SignupPage(page)),
  loginPage: async ({ page }, use) => use(new LoginPage(page)),
  shell: async ({ page }, use) => use(new AppShell(page)),
  clustersPage: async ({ page }, use) => use(new ClustersPage(page)),
  clusterPage: async ({ page }, use) => use(new ClusterPage(page)),
  demoLogin: async ({}, use) => {
    // The server writes the demo password to its data dir; scripts/test.sh passes the file's path.
    const file = process.env.HEADROOM_E2E_DEMO_PASSWORD_FILE;
    if (!file) throw new Error('Set HEADROOM_E2E_DEMO_PASSWORD_FILE to <HEADROOM_DATA_DIR>/demo-password.txt');
    await use({ email: 'demo@example.com', password: readFileSync(file, 'utf8').trim() });
  },
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
