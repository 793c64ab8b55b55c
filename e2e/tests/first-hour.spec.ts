import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page, TestInfo } from '@playwright/test';
import { collectViolations, expectPolicy, ROUTES, ROUTES_WITH_MADE_UP_IDS, routeOf, type Violation, watchViolations } from '../csp';
import { expect, test } from '../fixtures';
import { type AxeViolation, checkLayout, expectChangesTableFits } from '../layout-checks';
import { overflowingElements } from '../overflow';

// A new SRE's first hour, as a crawl: every page and tab of the dashboard, for the demo organisation and for a
// fresh one, at a desktop's width (1440 px) and a phone's (390 px). On every page:
// - the visible text speaks to the user: no repository path (docs/..., backend/...py), no metric id
//   (ebs.burst_balance, derived.counted_iops), no forecast method code ((holt), ets-daily, (M4)), no raw
//   Python value ("-> None", "= True"), no finding key, no "UTC UTC";
// - the page does not scroll sideways;
// - the browser's console has no error (a failed request, a React warning logged as an error, an exception);
// - no first paint lies: every text the page showed while it loaded is recorded (a MutationObserver from the
//   first byte), and an empty state ("No findings yet", "$0", a score of 0...) that was shown and then went away
//   once the data came was a contradiction the user saw;
// - the page was sent with the Content-Security-Policy and reports no violation of it (../csp.ts): together the
//   crawls open every page of the dashboard (frontend/route-paths.json), which the demo's crawl checks; csp.spec.ts
//   opens the few it leaves out (links with a made-up token, a source id that does not exist);
// - at the desktop's width, the layout checks (../layout-checks.ts: axe's rules for scrollable regions and for
//   buttons', links' and labels' names, no table cell squeezed to a sliver, the avatar off the nav links, the current
//   cluster tab in sight); layout.spec.ts runs them at the phone's width and on the pages the crawl leaves out, and
//   the demo's crawl fails on a page of frontend/route-paths.json that neither checks.
// What each page showed is attached as first-hour-<width>.json.

const VIEWPORTS = [
  { name: 'desktop', width: 1440, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;

/** What a user must never read, each with the words a failure uses (docs/jargon.json: the backend's scans read it too). */
const JARGON: { what: string; pattern: RegExp }[] = (
  JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../../docs/jargon.json'), 'utf8')) as {
    patterns: { what: string; pattern: string }[];
  }
).patterns.map(({ what, pattern }) => ({ what, pattern: new RegExp(pattern) }));

/** Empty states: shown while loading and gone when the data came, the page told the user something false. */
const EMPTY_STATES = [
  /No findings yet/,
  /No clusters yet/,
  /No data\b/,
  /\b0 (?:open )?findings\b/,
  /\bscore(?: of)? 0\b/i,
  /Savings[^\n]*\$0(?:\.00)?\b/,
  /\bceiling reached\b/i,
];

interface PageRecord {
  org: string;
  page: string;
  url: string;
  width: number;
  scrollWidth: number;
  overflowing: string[];
  jargon: string[];
  consoleErrors: string[];
  liedWhileLoading: string[];
  cspViolations: Violation[];
  /** The violations of the layout budget's axe rules (at the desktop's width), each a failure. */
  axeViolations?: AxeViolation[];
  textsSeen: number;
}

async function recordTexts(context: BrowserContext) {
  // Every distinct text of the page as it changes, from the first paint on (capped: a page is drawn in a few
  // dozen steps; the cap only bounds a page that animates).
  await context.addInitScript(() => {
    const w = window as unknown as { __texts: string[] };
    w.__texts = [];
    let last = '';
    const take = () => {
      const text = document.body?.innerText ?? '';
      if (text !== last && w.__texts.length < 400) {
        w.__texts.push(text);
        last = text;
      }
    };
    new MutationObserver(take).observe(document, { childList: true, subtree: true, characterData: true });
  });
}

function jargonIn(text: string): string[] {
  const found: string[] = [];
  for (const { what, pattern } of JARGON) {
    const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
    for (const m of text.matchAll(global)) {
      const at = m.index ?? 0;
      found.push(`${what}: "${m[0]}" in "…${text.slice(Math.max(0, at - 40), at + m[0].length + 40).replace(/\s+/g, ' ')}…"`);
    }
  }
  return found;
}

class Crawl {
  readonly records: PageRecord[] = [];
  /** The routes of frontend/route-paths.json this crawl opened. */
  readonly routes = new Set<string>();
  /** The routes whose pages had the layout checks (an empty set when the crawl does not run them). */
  readonly laidOut = new Set<string>();
  private errors: string[] = [];
  private violations: Violation[] = [];
  private current = '';

  constructor(
    private readonly page: Page,
    private readonly testInfo: TestInfo,
    private readonly org: string,
    /** Run the layout checks (../layout-checks.ts) on every page. */
    readonly checksLayout: boolean,
  ) {
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      // The weekly email's preview is a sandboxed frame without scripts: the text recorder this test adds to
      // every frame (recordTexts, and the policy's watcher) is refused there, and Chromium says so (the message names
      // the frame; once the frame is drawn, its location is empty). Those scripts are the test's, not the app's.
      if (message.text().startsWith("Blocked script execution in 'about:srcdoc' because the document's frame is sandboxed")) return;
      this.errors.push(`${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (error) => this.errors.push(`uncaught: ${error.message}`));
  }

  /** Record Content-Security-Policy violations from the next page on (once per test: it adds an init script). */
  async watchPolicy(context: BrowserContext) {
    await watchViolations(context, this.page, this.violations, () => this.current);
  }

  /** Open `url`, wait until `ready` and the network is quiet, then check the page. */
  async visit(name: string, url: string, ready?: () => Promise<void>) {
    await test.step(`${this.org}: ${name}`, async () => {
      this.errors = [];
      this.current = name;
      const response = await this.page.goto(url);
      expectPolicy(response, `${this.org}: ${name} (${url})`);
      const route = routeOf(url);
      if (route) this.routes.add(route);
      await this.checkCurrent(name, ready);
      if (route && this.checksLayout) this.laidOut.add(route);
    });
  }

  /** Check the page the browser is on (after a click that navigated in the app). */
  async checkCurrent(name: string, ready?: () => Promise<void>) {
    const page = this.page;
    this.current = name;
    if (ready) await ready();
    await page.waitForLoadState('networkidle');
    await collectViolations(page, this.violations, name);
    const violations = this.violations.splice(0);
    await expect(page.locator('#root')).not.toBeEmpty();
    const width = page.viewportSize()?.width ?? 0;
    const label = `${this.org}: ${name} at ${width} px`;
    const { finalText, texts, scrollWidth } = await page.evaluate(() => ({
      finalText: document.body.innerText,
      texts: (window as unknown as { __texts?: string[] }).__texts ?? [],
      scrollWidth: document.documentElement.scrollWidth,
    }));
    // A title or an aria-label is read too (a tooltip, a screen reader).
    const attributes = await page.evaluate(() =>
      [...document.querySelectorAll('[title], [aria-label]')]
        .filter((el) => !el.closest('iframe'))
        .flatMap((el) => [el.getAttribute('title') ?? '', el.getAttribute('aria-label') ?? ''])
        .join('\n'),
    );
    const overflowing = scrollWidth > width ? await page.evaluate(overflowingElements) : [];
    const axeViolations = this.checksLayout ? await checkLayout(page, label, 'budget') : undefined;
    const jargon = [...new Set(jargonIn(`${finalText}\n${attributes}`))];
    const lied = EMPTY_STATES.filter((state) => !state.test(finalText))
      .flatMap((state) => {
        const shown = texts.find((t) => state.test(t));
        return shown ? [`"${shown.match(state)?.[0]}" was shown while the page loaded and is gone now`] : [];
      });
    const record: PageRecord = {
      org: this.org, page: name, url: new URL(page.url()).pathname + new URL(page.url()).search, width,
      scrollWidth, overflowing, jargon, consoleErrors: [...this.errors], liedWhileLoading: lied, cspViolations: violations,
      axeViolations, textsSeen: texts.length,
    };
    this.records.push(record);
    writeFileSync(this.testInfo.outputPath(`first-hour-${width}-${this.org}.json`), JSON.stringify(this.records, null, 2));
    expect.soft(jargon, `${label}: words meant for Headroom's developers`).toEqual([]);
    expect.soft(scrollWidth, `${label}: the page scrolls sideways (${overflowing.join('; ')})`).toBeLessThanOrEqual(width);
    expect.soft(this.errors, `${label}: console errors`).toEqual([]);
    expect.soft(lied, `${label}: an empty state shown while loading`).toEqual([]);
    expect.soft(violations, `${label}: Content-Security-Policy violations`).toEqual([]);
    // A fresh document for the next page's record of texts.
    await page.evaluate(() => {
      (window as unknown as { __texts: string[] }).__texts = [];
    });
    this.errors = [];
  }
}

/** The pages of a visitor (not logged in). A link opened without its token says so (the pages with a made-up token
 * show the server's refusal, which the browser logs as a failed request: those are csp.spec.ts's). */
const VISITOR_PAGES = [
  ['log in', '/login'],
  ['sign up', '/signup'],
  ['confirm sign-up without a link', '/signup/confirm'],
  ['accept an invitation without a link', '/accept-invitation'],
  ['unsubscribe without a link', '/unsubscribe'],
] as const;

/** Settings pages every organisation has (the source pages with ids are visited where the org has sources). */
const SETTINGS = [
  ['organisation', '/settings'],
  ['members', '/settings/members'],
  ['invitations', '/settings/invitations'],
  ['API tokens', '/settings/tokens'],
  ['sources', '/settings/sources'],
  ['connect AWS', '/settings/sources/aws/new'],
  ['connect Prometheus', '/settings/sources/prometheus/new'],
  ['alerts', '/settings/alerts'],
  ['apply', '/settings/apply'],
  ['recommendations', '/settings/recommendations'],
  ['weekly email', '/settings/digest'],
  ['audit log', '/settings/audit-log'],
] as const;

for (const viewport of VIEWPORTS) {
  test.describe(`the first hour at ${viewport.width} px`, () => {
    test.use({ viewport: { width: viewport.width, height: viewport.height } });

    test(`visitor pages at ${viewport.width} px`, async ({ page, context }, testInfo) => {
      await recordTexts(context);
      const crawl = new Crawl(page, testInfo, 'visitor', viewport.name === 'desktop');
      await crawl.watchPolicy(context);
      const form = () => expect(page.getByRole('button').first()).toBeVisible();
      for (const [name, url] of VISITOR_PAGES) await crawl.visit(name, url, url === '/login' || url === '/signup' ? form : undefined);
    });

    test(`every page of the demo organisation at ${viewport.width} px`, async ({
      page, context, clusterPage, openDemoCluster,
    }, testInfo) => {
      test.setTimeout(600_000);
      await recordTexts(context);
      const crawl = new Crawl(page, testInfo, 'demo', viewport.name === 'desktop');
      await crawl.watchPolicy(context);
      const base = (await openDemoCluster({ waitForFindingsMs: 240_000 })).path;
      const api = page.request;

      const fleet = () => expect(page.getByRole('row').nth(1)).toBeVisible();
      await crawl.visit('clusters', '/clusters', fleet);
      await crawl.visit('the start page (the clusters)', '/', fleet);
      await crawl.visit('cluster overview', base, () => expect(clusterPage.nodesTable()).toBeVisible());
      await crawl.visit('findings', `${base}/findings`, () => expect(clusterPage.findingLinks().first()).toBeVisible());
      const findings = (await (await api.get(`/api/v1${base}/findings`)).json()) as {
        items: { id: string; rule_id?: string; title: string }[];
      };
      for (const finding of findings.items) {
        await crawl.visit(`finding: ${finding.title}`, `${base}/findings/${finding.id}`, async () => {
          await expect(clusterPage.evidence()).toBeVisible();
          // A compaction finding's charts: the longest impact labels and change tables of the demo's findings (its
          // "Impact of the fix" once gave its label column 442 px and its values 0 px at 390 px).
          if (/compaction/i.test(finding.title)) {
            await expect(clusterPage.evidence().getByRole('figure').first()).toBeVisible({ timeout: 20_000 });
          }
        });
      }
      for (const range of ['6h', '7d']) {
        await crawl.visit(`metrics over ${range}`, `${base}/metrics?range=${range}`, () =>
          clusterPage.metricsPanelsDrawn());
      }
      await crawl.visit('config', `${base}/config`, () =>
        expect(page.getByRole('heading', { name: 'Live config' })).toBeVisible());
      // Every finding picked: the widest diff the demo makes (lists per compaction level, AWS changes, long reasons).
      const picks = page.getByRole('group', { name: 'Findings to include' }).getByRole('checkbox');
      for (const pick of await picks.all()) await pick.check();
      if (crawl.checksLayout) {
        await crawl.checkCurrent('config: every finding picked', () =>
          expect(page.getByRole('status').filter({ hasText: /tikv\.toml change/ })).toContainText(/[1-9]/));
      }
      await clusterPage.createPatchButton().click();
      await crawl.checkCurrent('config: the diff of every finding', () =>
        expect(clusterPage.diff()).toContainText(/^\+\S+ = /m));
      await crawl.visit('what-if', `${base}/what-if`);

      const csrf = (await context.cookies()).find((c) => c.name === 'headroom_csrf')?.value ?? '';
      const created = await api.post(`/api/v1${base}/patches`, {
        data: { finding_ids: 'all_open' }, headers: { 'X-CSRF-Token': csrf },
      });
      expect(created.ok(), await created.text()).toBeTruthy();
      const patch = (await created.json()) as { id: string };
      await crawl.visit('patches', `${base}/patches`, () =>
        expect(page.getByRole('table', { name: 'Patches' }).getByRole('link').first()).toBeVisible());
      await crawl.visit('a patch of every open finding', `${base}/patches/${patch.id}`, () =>
        expectChangesTableFits(page, `a patch of every open finding at ${viewport.width} px`));

      // The weekly email's page with its preview drawn: a sandboxed frame under the page's policy, with the email's
      // inline styles and data: charts.
      const ready: Record<string, () => Promise<void>> = {
        '/settings/digest': () =>
          expect(page.frameLocator('iframe[title="Email preview"]').locator('body')).toContainText(/\S/, { timeout: 30_000 }),
        '/settings/sources': () => expect(page.getByRole('link', { name: 'Connect AWS account' })).toBeVisible(),
        '/settings/sources/aws/new': () => expect(page.getByLabel('Trust policy', { exact: true })).toBeVisible(),
        '/settings/alerts': () => expect(page.getByRole('form', { name: 'Add an alert channel' })).toBeVisible(),
      };
      for (const [name, url] of SETTINGS) await crawl.visit(name, url, ready[url]);
      // How Headroom decides: the index and every page it lists (rendered from the threshold documents).
      await crawl.visit('how Headroom decides', '/decides', () =>
        expect(page.getByRole('heading', { level: 1 })).toBeVisible());
      const decides = [...new Set(await page.locator('main a[href^="/decides/"]').evaluateAll(
        (links) => links.map((a) => (a as HTMLAnchorElement).getAttribute('href') ?? '')))];
      expect(decides.length, 'the pages How Headroom decides lists').toBeGreaterThan(5);
      for (const href of decides) {
        await crawl.visit(`how Headroom decides: ${href}`, href, () =>
          expect(page.getByRole('heading', { level: 1 })).toBeVisible());
      }
      const aws = (await (await api.get('/api/v1/sources/aws')).json()) as { id: string }[];
      for (const source of aws) await crawl.visit('an AWS source', `/settings/sources/aws/${source.id}`);
      const prometheus = (await (await api.get('/api/v1/sources/prometheus')).json()) as { id: string }[];
      for (const source of prometheus) await crawl.visit('a Prometheus source', `/settings/sources/prometheus/${source.id}`);

      // Every page of the dashboard had its policy checked: here, in the visitor crawl, or by csp.spec.ts.
      const elsewhere = [...VISITOR_PAGES.map(([, url]) => routeOf(url)), ...ROUTES_WITH_MADE_UP_IDS];
      expect(ROUTES.filter((route) => !crawl.routes.has(route) && !elsewhere.includes(route)), 'pages no crawl opened')
        .toEqual([]);
      // ... and had the layout checks at the desktop's width: here, in the visitor crawl, or in layout.spec.ts.
      if (crawl.checksLayout) {
        expect(ROUTES.filter((route) => !crawl.laidOut.has(route) && !elsewhere.includes(route)),
          'pages without the layout checks at the desktop width').toEqual([]);
      }
    });

    test(`every page of a fresh organisation at ${viewport.width} px`, async ({
      page, context, signupPage, clustersPage, newAccount, outbox,
    }, testInfo) => {
      test.setTimeout(180_000);
      await recordTexts(context);
      const crawl = new Crawl(page, testInfo, 'fresh', viewport.name === 'desktop');
      await crawl.watchPolicy(context);
      await signupPage.goto();
      await signupPage.signUp(newAccount);
      await expect(signupPage.checkYourEmail()).toBeVisible();
      await signupPage.followEmailedLink(await outbox.signupLink(newAccount.email));
      await expect(clustersPage.heading()).toBeVisible();
      await crawl.checkCurrent('clusters, right after sign-up', () => expect(clustersPage.emptyStateHint()).toBeVisible());
      for (const [name, url] of SETTINGS) await crawl.visit(name, url);
    });
  });
}
