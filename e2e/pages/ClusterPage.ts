import { expect, type Download, type Locator, type Page } from '@playwright/test';
import { CHART_LINE } from '../first-chart';
import { scrollTo } from './Charts';

/** The demo organisation's simulated cluster, as the clusters list names it. */
export const DEMO_CLUSTER = 'demo-prod (demo)';

/** /clusters/:id and its tabs: overview, findings (list and detail), config, patches, what-if. */
export class ClusterPage {
  constructor(private readonly page: Page) {}

  /** A cluster's row in the clusters list (the fleet view). */
  listRow(name: string): Locator {
    return this.page.getByRole('row', { name: new RegExp(name.replace(/[()]/g, '\\$&')) });
  }

  /** Open a cluster from the clusters list and wait for its page. */
  async openFromList(name: string) {
    await this.listRow(name).getByRole('link').first().click();
    await expect(this.heading(name)).toBeVisible();
  }

  heading(name: string) {
    return this.page.getByRole('heading', { name, level: 1 });
  }

  tabs() {
    return this.page.getByRole('navigation', { name: 'Cluster sections' });
  }

  /** Open a tab and wait until its page is the one shown (a click that lands while the page is still being
   * set up is made again: CI once stayed on the overview after a click on Findings at a phone's width). */
  async openTab(name: 'Overview' | 'Findings' | 'Metrics' | 'Config' | 'Patches' | 'What-if') {
    const link = this.tabs().getByRole('link', { name, exact: true });
    const href = await link.getAttribute('href');
    await expect(async () => {
      if (new URL(this.page.url()).pathname !== href) await link.click();
      await expect.poll(() => new URL(this.page.url()).pathname, { timeout: 3_000 }).toBe(href);
    }).toPass({ timeout: 30_000 });
  }

  sourceHealth() {
    return this.page.getByRole('list', { name: 'Source health' });
  }

  severityCounts() {
    return this.page.getByRole('list', { name: 'Open findings by severity' });
  }

  nodesTable() {
    return this.page.getByRole('table', { name: 'TiKV nodes' });
  }

  findingsTable() {
    return this.page.getByRole('table', { name: 'Findings' });
  }

  /** The link of each finding in the list (its title). */
  findingLinks(): Locator {
    return this.findingsTable().getByRole('rowheader').getByRole('link');
  }

  /**
   * Wait until the advisor's first findings are listed: a fresh server simulates the demo fleet and advises it
   * in its first minutes (findings/jobs.py advice.demo_first runs every minute), so reload until they are there.
   */
  async waitForFindings(timeoutMs: number) {
    await expect(async () => {
      await this.page.reload();
      await expect(this.findingLinks().first()).toBeVisible({ timeout: 5_000 });
    }).toPass({ timeout: timeoutMs, intervals: [5_000] });
  }

  evidence() {
    return this.page.getByRole('region', { name: 'Evidence' });
  }

  measures() {
    return this.page.getByRole('table', { name: 'Measures against limits' });
  }

  findingToInclude(title: string | RegExp) {
    return this.page.getByRole('group', { name: 'Findings to include' }).getByRole('checkbox', { name: title });
  }

  /**
   * Wait until the Metrics tab has drawn all its panels: their count holds still, and each panel, scrolled into
   * view (a plot is drawn when scrolled near the viewport), shows its chart line or its empty message.
   */
  async metricsPanelsDrawn() {
    const charts = this.page.locator('.metrics__grid').getByRole('figure');
    await expect(charts.first()).toBeVisible({ timeout: 30_000 });
    let last = -1;
    await expect.poll(async () => {
      const now = await charts.count();
      const settled = now === last;
      last = now;
      return settled;
    }, { intervals: [500], timeout: 20_000 }).toBe(true);
    for (let i = 0; i < last; i += 1) {
      const chart = charts.nth(i);
      await scrollTo(chart);
      // attached, not visible: a flat line (a series at 0 all along) has a box of no height, which is not "visible"
      await expect(chart.locator(`${CHART_LINE}, .ts-chart__empty`).first()).toBeAttached({ timeout: 20_000 });
    }
    await this.page.evaluate(() => window.scrollTo(0, 0));
  }

  createPatchButton() {
    return this.page.getByRole('button', { name: 'Create patch' });
  }

  diff() {
    return this.page.getByLabel(/^Diff of tikv\.toml on /);
  }

  /** The Rollback toggle: the download buttons then give each format's undo, a file of that format. */
  rollbackToggle() {
    return this.page.getByRole('checkbox', { name: /^Rollback/ });
  }

  async download(format: string): Promise<Download> {
    const pending = this.page.waitForEvent('download');
    await this.page.getByRole('button', { name: new RegExp(`^Download ${format} \\(`) }).click();
    return pending;
  }
}
