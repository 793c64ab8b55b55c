import { writeFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from '@playwright/test';
import { expect, test } from '../fixtures';
import { DEMO_CLUSTER } from '../pages/ClusterPage';

// The request budget (bench/README.md): one page load fetches no API URL (path and query) twice. Each page is opened cold
// in a fresh browser context (the login's cookies, an empty cache), so the JavaScript bytes recorded are a first
// load's; the requests and bytes are attached to the test as JSON.


interface PageLoad {
  page: string;
  url: string;
  /** Each API request in order, as "METHOD /path?query". */
  apiRequests: string[];
  /** URLs (path and query) requested more than once. */
  duplicateUrls: string[];
  /** Endpoints (path without the query) requested more than once, e.g. one list with two orders. */
  duplicateEndpoints: string[];
  jsFiles: { url: string; transferredBytes: number; encoding: string | null }[];
  jsTransferredBytes: number;
}

function repeated(keys: string[]): string[] {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return [...counts].filter(([, n]) => n > 1).map(([key, n]) => `${key} (${n}x)`);
}

async function loadCold(browser: Browser, storageState: Awaited<ReturnType<BrowserContext['storageState']>>,
  baseURL: string, name: string, path: string, ready: (page: Page) => Promise<void>): Promise<PageLoad> {
  const context = await browser.newContext({ storageState, baseURL });
  const page = await context.newPage();
  const apiRequests: string[] = [];
  const scripts: Promise<PageLoad['jsFiles'][number]>[] = [];
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith('/api/')) {
      apiRequests.push(`${request.method()} ${url.pathname}${url.search}`);
    }
  });
  page.on('requestfinished', (request) => {
    if (request.resourceType() !== 'script') return;
    scripts.push((async () => {
      const [sizes, response] = await Promise.all([request.sizes(), request.response()]);
      const encoding = (await response?.allHeaders())?.['content-encoding'] ?? null;
      return { url: new URL(request.url()).pathname, transferredBytes: sizes.responseBodySize, encoding };
    })());
  });
  await page.goto(path);
  await ready(page);
  await page.waitForLoadState('networkidle');
  const jsFiles = await Promise.all(scripts);
  await context.close();
  return {
    page: name,
    url: path,
    apiRequests,
    duplicateUrls: repeated(apiRequests),
    duplicateEndpoints: repeated(apiRequests.map((key) => key.split('?')[0] ?? key)),
    jsFiles,
    jsTransferredBytes: jsFiles.reduce((sum, file) => sum + file.transferredBytes, 0),
  };
}

test('each page of the demo cluster fetches every API URL once, and the source lists only where it shows them', async ({ page, browser, baseURL, signInAsDemo },
  testInfo) => {
  test.setTimeout(180_000);
  await signInAsDemo();
  await page.getByRole('row', { name: new RegExp(DEMO_CLUSTER.replace(/[()]/g, '\\$&')) }).getByRole('link').click();
  await expect(page).toHaveURL(/\/clusters\/[0-9a-f-]{36}$/);
  const cluster = new URL(page.url()).pathname;
  const storageState = await page.context().storageState();
  const findings = (await (await page.request.get(`/api/v1${cluster}/findings`)).json()) as {
    items: { id: string; title: string }[];
  };
  const finding = findings.items[0];
  expect(finding, 'the demo cluster has a finding').toBeTruthy();

  const heading = (name: string | RegExp) => async (p: Page) => {
    await expect(p.getByRole('heading', { name, level: 1 }).first()).toBeVisible({ timeout: 30_000 });
  };
  const pages: [string, string, (p: Page) => Promise<void>][] = [
    ['overview', cluster, heading(DEMO_CLUSTER)],
    ['findings', `${cluster}/findings`, heading(DEMO_CLUSTER)],
    ['metrics', `${cluster}/metrics`, heading(DEMO_CLUSTER)],
    // its title, whether or not it has evidence to chart (a configuration finding has none)
    ['a finding', `${cluster}/findings/${finding!.id}`, async (p) => {
      await expect(p.getByRole('heading', { name: finding!.title, level: 2 })).toBeVisible({ timeout: 30_000 });
    }],
    ['config', `${cluster}/config`, heading(DEMO_CLUSTER)],
    ['patches', `${cluster}/patches`, heading(DEMO_CLUSTER)],
    ['sources', '/settings/sources', async (p) => {
      await expect(p.getByRole('heading', { name: /sources/i }).first()).toBeVisible({ timeout: 30_000 });
    }],
  ];
  const loads: PageLoad[] = [];
  for (const [name, path, ready] of pages) {
    loads.push(await test.step(`open ${name} cold`, () => loadCold(browser, storageState, baseURL!, name, path, ready)));
  }
  // Written beside the test's other artefacts (e2e/test-results) as well as attached to the report.
  const record = testInfo.outputPath('page-loads.json');
  writeFileSync(record, JSON.stringify(loads, null, 2));
  await testInfo.attach('page-loads.json', { path: record, contentType: 'application/json' });
  for (const load of loads) {
    expect.soft(load.duplicateUrls, `${load.page} (${load.url}) fetched an API URL more than once`).toEqual([]);
    expect.soft(load.duplicateEndpoints, `${load.page} (${load.url}) fetched an endpoint more than once`).toEqual([]);
    if (load.page !== 'overview' && load.page !== 'sources') {
      // Only the overview shows the source badges, the one use of both source lists on a cluster page.
      expect.soft(load.apiRequests.filter((r) => r.includes('/api/v1/sources/')), `${load.page} fetched the source lists`)
        .toEqual([]);
    }
  }
});
