import { randomUUID } from 'node:crypto';
import { test as base } from '@playwright/test';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
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
  /** The demo organisation's login that `headroom serve` seeds (sources/demo/service.py ensure_demo_account). */
  demoLogin: { email: string; password: string };
  /** A fresh, never-used account per test, so runs never collide on a shared database. */
  newAccount: NewAccount;
  /** The account email a server without SMTP writes to <HEADROOM_DATA_DIR>/outbox (platform/mail.py). */
  outbox: Outbox;
}

export interface Outbox {
  /** The path and query of the newest sign-up link emailed to `email` (waits for it to arrive). */
  signupLink(email: string): Promise<string>;
}

function outboxDir(): string {
  if (process.env.HEADROOM_E2E_OUTBOX_DIR) return process.env.HEADROOM_E2E_OUTBOX_DIR;
  const file = process.env.HEADROOM_E2E_DEMO_PASSWORD_FILE;
  if (!file) throw new Error('Set HEADROOM_E2E_OUTBOX_DIR to <HEADROOM_DATA_DIR>/outbox');
  return join(dirname(file), 'outbox');
}

function readSignupLink(dir: string, email: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.txt')).sort().reverse();
  } catch {
    return undefined;
  }
  for (const name of names) {
    const text = readFileSync(join(dir, name), 'utf8');
    if (!text.toLowerCase().startsWith(`to: ${email.toLowerCase()}\n`)) continue;
    const link = /https?:\/\/\S+?(\/signup\/confirm\?token=\S+)/.exec(text);
    if (link?.[1]) return link[1];
  }
  return undefined;
}

export const test = base.extend<Fixtures>({
  outbox: async ({}, use) => {
    const dir = outboxDir();
    await use({
      async signupLink(email: string) {
        const deadline = Date.now() + 15_000;
        for (;;) {
          const link = readSignupLink(dir, email);
          if (link) return link;
          if (Date.now() > deadline) throw new Error(`no sign-up link for ${email} in ${dir}`);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      },
    });
  },
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
