import { writeFileSync } from 'node:fs';
import type { Page, TestInfo } from '@playwright/test';
import { ROUTES_WITH_MADE_UP_IDS, routeOf } from '../csp';
import { expect, test } from '../fixtures';
import { type AxeViolation, checkLayout, expectChangesTableFits } from '../layout-checks';
import { DEMO_CLUSTER } from '../pages/ClusterPage';

// Every page at a phone's width (390 CSS px, iPhone 12-15) passes axe's checks of scrollable regions and of buttons'
// and links' names, squeezes no table cell or fact to a sliver, keeps the user menu off the nav links and the current
// cluster tab in sight (../layout-checks.ts). A full-page screenshot of each page is attached to the report, and
// every axe violation seen as JSON. At a desktop's width the first-hour crawl (first-hour.spec.ts) runs the same
// checks on every page it opens; the pages it does not open (links with a made-up token, a source that does not
// exist) are checked here. That no page scrolls sideways is the crawl's check, at both widths.

const VIEWPORTS = [{ name: 'phone', width: 390, height: 844 }] as const;
const DESKTOP = { width: 1440, height: 900 };
const NO_SUCH_ID = '00000000-0000-4000-8000-000000000000';

interface PageRecord {
  page: string;
  url: string;
  viewportWidth: number;
  violations: AxeViolation[];
}

async function checkPage(page: Page, testInfo: TestInfo, records: PageRecord[], name: string) {
  const viewportWidth = page.viewportSize()?.width ?? 0;
  const label = `${name} at ${viewportWidth} px`;

  const shot = testInfo.outputPath(`${viewportWidth}-${name}.png`);
  await page.screenshot({ path: shot, fullPage: true });
  await testInfo.attach(label, { path: shot, contentType: 'image/png' });

  const violations = await checkLayout(page, label, 'every');
  records.push({ page: name, url: new URL(page.url()).pathname + new URL(page.url()).search, viewportWidth,
    violations });
  // Rewritten after each page, so a run stopped half-way still leaves what it measured.
  writeFileSync(testInfo.outputPath(`layout-${viewportWidth}.json`), JSON.stringify(records, null, 2));
}

test.describe(`at ${DESKTOP.width} px`, () => {
  test.use({ viewport: DESKTOP });

  test('the pages the first-hour crawl does not open pass axe and keep their cells readable', async ({
    page, signInAsDemo,
  }, testInfo) => {
    const records: PageRecord[] = [];
    const visited = new Set<string>();
    // A page is drawn when the app has put something in #root (a page with an unknown id or token shows its error
    // there).
    const visit = async (name: string, url: string) => {
      await test.step(name, async () => {
        await page.goto(url);
        await expect(page.locator('#root')).not.toBeEmpty();
        await page.waitForLoadState('networkidle');
        await checkPage(page, testInfo, records, name);
        visited.add(routeOf(url) ?? url);
      });
    };
    await visit('confirm sign-up with a made-up token', '/signup/confirm?token=not-a-token');
    await visit('accept an invitation with a made-up token', '/accept-invitation?token=not-a-token');
    await visit('unsubscribe with a made-up token', '/unsubscribe?token=not-a-token');
    await signInAsDemo();
    await visit('a Prometheus source that does not exist', `/settings/sources/prometheus/${NO_SUCH_ID}`);
    // The first-hour crawl counts on these being checked here.
    expect([...visited].sort()).toEqual([...ROUTES_WITH_MADE_UP_IDS].sort());
    const record = testInfo.outputPath(`layout-${DESKTOP.width}.json`);
    await testInfo.attach(`layout-${DESKTOP.width}.json`, { path: record, contentType: 'application/json' });
  });
});

for (const viewport of VIEWPORTS) {
  test.describe(`at ${viewport.width} px`, () => {
    test.use({ viewport: { width: viewport.width, height: viewport.height } });

    test(`every page passes axe and keeps its cells readable at ${viewport.width} px`, async ({
      page,
      clusterPage,
      openDemoCluster,
    }, testInfo) => {
      // A fresh server needs its first minutes to simulate the demo fleet and run the advisor on it.
      test.setTimeout(300_000);
      const records: PageRecord[] = [];
      const check = (name: string) => checkPage(page, testInfo, records, name);
      const h1 = (name: string | RegExp) => page.getByRole('heading', { name, level: 1 }).first();

      const cluster = (await openDemoCluster()).path;
      await page.goto('/clusters');
      await expect(clusterPage.listRow(DEMO_CLUSTER)).toBeVisible();
      await test.step('clusters', () => check('clusters'));

      await test.step('cluster overview', async () => {
        await page.goto(cluster);
        await expect(clusterPage.severityCounts()).toBeVisible();
        await expect(clusterPage.nodesTable()).toBeVisible();
        await check('overview');
      });

      await test.step('findings', async () => {
        await page.goto(`${cluster}/findings`);
        await expect(clusterPage.findingLinks().first()).toBeVisible();
        await check('findings');
      });

      await test.step('a compaction finding with its charts', async () => {
        // A compaction finding: the longest impact labels and change tables of the demo's findings (its "Impact of
        // the fix" once gave its label column 442 px and its values 0 px at 390 px).
        await clusterPage.findingLinks().filter({ hasText: /compaction/i }).first().click();
        await expect(clusterPage.evidence()).toBeVisible();
        await expect(clusterPage.evidence().getByRole('figure').first()).toBeVisible({ timeout: 20_000 });
        await check('finding');
      });

      for (const range of ['6h', '7d']) {
        await test.step(`metrics over ${range}`, async () => {
          await page.goto(`${cluster}/metrics?range=${range}`);
          await clusterPage.metricsPanelsDrawn();
          await check(`metrics-${range}`);
        });
      }

      let patchPath = '';
      await test.step('config, every finding picked, and the diff of the patch they make', async () => {
        await page.goto(`${cluster}/config`);
        await expect(page.getByRole('heading', { name: 'Live config' })).toBeVisible();
        // Every finding: the widest patch the demo makes (lists per compaction level, AWS changes, long reasons).
        const findings = page.getByRole('group', { name: 'Findings to include' }).getByRole('checkbox');
        await expect(findings.first()).toBeVisible();
        for (const finding of await findings.all()) await finding.check();
        await expect(page.getByRole('status').filter({ hasText: /tikv\.toml change/ })).toContainText(/[1-9]/);
        await check('config');
        await clusterPage.createPatchButton().click();
        await expect(clusterPage.diff()).toContainText(/^\+\S+ = /m);
        await check('config-diff');
        patchPath = new URL(await page.getByRole('link', { name: 'Open the patch' }).getAttribute('href') ?? '',
          page.url()).pathname;
      });

      await test.step('patches', async () => {
        await page.goto(`${cluster}/patches`);
        await expect(page.getByRole('table', { name: 'Patches' }).getByRole('link').first()).toBeVisible();
        await check('patches');
      });

      await test.step('a patch', async () => {
        await page.goto(patchPath);
        await expectChangesTableFits(page, `the patch at ${viewport.width} px`);
        await check('patch');
      });

      await test.step('data sources', async () => {
        await page.goto('/settings/sources');
        await expect(h1('Data sources')).toBeVisible();
        await expect(page.getByRole('link', { name: 'Connect AWS account' })).toBeVisible();
        await check('sources');
      });

      // The demo's own AWS source record, when this build seeds one; a sources list without it has none to open.
      const awsLinks = page.locator('a[href^="/settings/sources/aws/"]:not([href$="/new"])');
      if ((await awsLinks.count()) > 0) {
        await test.step('an AWS source', async () => {
          await awsLinks.first().click();
          await expect(h1(/./)).toBeVisible();
          await page.waitForLoadState('networkidle');
          await check('aws-source');
        });
      } else {
        testInfo.annotations.push({ type: 'note', description: 'the demo organisation has no AWS source to open' });
      }

      await test.step('connect AWS', async () => {
        await page.goto('/settings/sources/aws/new');
        await expect(page.getByLabel('Trust policy', { exact: true })).toBeVisible();
        await check('aws-connect');
      });

      await test.step('weekly email', async () => {
        await page.goto('/settings/digest');
        await expect(h1(/weekly email/i)).toBeVisible();
        await expect(page.getByRole('region', { name: 'Your weekly email' })).toBeVisible();
        await page.waitForLoadState('networkidle');
        await check('weekly-email');
      });

      await test.step('alerts', async () => {
        await page.goto('/settings/alerts');
        await expect(h1(/alerts/i)).toBeVisible();
        await expect(page.getByRole('form', { name: 'Add an alert channel' })).toBeVisible();
        await page.waitForLoadState('networkidle');
        await check('alerts');
      });

      const record = testInfo.outputPath(`layout-${viewport.width}.json`);
      await testInfo.attach(`layout-${viewport.width}.json`, { path: record, contentType: 'application/json' });
    });
  });
}
