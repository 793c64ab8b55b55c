import { randomUUID } from 'node:crypto';
import { expect, test as base, type Cookie } from '@playwright/test';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AppShell } from './pages/AppShell';
import { ClusterPage, DEMO_CLUSTER } from './pages/ClusterPage';
import { ClustersPage } from './pages/ClustersPage';
import { LoginPage } from './pages/LoginPage';
import { SignupPage, type NewAccount } from './pages/SignupPage';

interface WorkerFixtures {
  /**
   * The cookies of one demo login per worker, made through the login form (auth.spec.ts and cluster.spec.ts test
   * that form itself): a test that needs the demo organisation starts signed in instead of logging in again.
   */
  demoSession: Cookie[];
}

interface Fixtures {
  signupPage: SignupPage;
  loginPage: LoginPage;
  shell: AppShell;
  clustersPage: ClustersPage;
  clusterPage: ClusterPage;
  /** The demo organisation's login that `headroom serve` seeds (sources/demo/service.py ensure_demo_account). */
  demoLogin: { email: string; password: string };
  /** Sign the page's browser context in as the demo user (the worker's demo session) and open the clusters list. */
  signInAsDemo: () => Promise<void>;
  /** A fresh, never-used account per test, so runs never collide on a shared database. */
  newAccount: NewAccount;
  /** The account email a server without SMTP writes to <HEADROOM_DATA_DIR>/outbox (platform/mail.py). */
  outbox: Outbox;
  /**
   * Log in as the demo user, find the demo cluster through the API, open its Findings tab and wait until the first
   * advice has produced findings (a fresh server simulates and advises the demo fleet in its first minutes).
   */
  openDemoCluster: (options?: { waitForFindingsMs?: number }) => Promise<DemoCluster>;
}

export interface DemoCluster {
  id: string;
  name: string;
  /** The cluster's page, /clusters/<id>; its tabs are below it. */
  path: string;
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

function demoPassword(): string {
  // The server writes the demo password to its data dir; scripts/test.sh passes the file's path.
  const file = process.env.HEADROOM_E2E_DEMO_PASSWORD_FILE;
  if (!file) throw new Error('Set HEADROOM_E2E_DEMO_PASSWORD_FILE to <HEADROOM_DATA_DIR>/demo-password.txt');
  return readFileSync(file, 'utf8').trim();
}

const DEMO_EMAIL = 'demo@example.com';

export const test = base.extend<Fixtures, WorkerFixtures>({
  demoSession: [
    async ({ browser }, use, workerInfo) => {
      const context = await browser.newContext({ baseURL: workerInfo.project.use.baseURL });
      const page = await context.newPage();
      const login = new LoginPage(page);
      await login.goto();
      await login.logIn(DEMO_EMAIL, demoPassword());
      await expect(page.getByRole('heading', { name: 'Clusters', level: 1 })).toBeVisible({ timeout: 30_000 });
      const cookies = await context.cookies();
      await context.close();
      await use(cookies);
    },
    { scope: 'worker' },
  ],
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
    await use({ email: DEMO_EMAIL, password: demoPassword() });
  },
  signInAsDemo: async ({ page, demoSession }, use) => {
    await use(async () => {
      await page.context().addCookies(demoSession);
      await page.goto('/clusters');
      await expect(page.getByRole('heading', { name: 'Clusters', level: 1 })).toBeVisible();
    });
  },
  openDemoCluster: async ({ page, clusterPage, signInAsDemo }, use) => {
    await use(async ({ waitForFindingsMs = 180_000 } = {}) => {
      await signInAsDemo();
      const answer = await page.request.get('/api/v1/clusters');
      const clusters = (await answer.json()) as { items: { id: string; name: string }[] };
      const cluster = clusters.items.find((c) => c.name === DEMO_CLUSTER);
      if (!cluster) throw new Error(`no cluster named ${DEMO_CLUSTER} in the demo organisation`);
      const path = `/clusters/${cluster.id}`;
      await page.goto(`${path}/findings`);
      await clusterPage.waitForFindings(waitForFindingsMs);
      return { id: cluster.id, name: cluster.name, path };
    });
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
