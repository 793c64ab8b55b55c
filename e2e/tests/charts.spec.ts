import type { Page, Response } from '@playwright/test';
import { expect, test } from '../fixtures';
import { Charts, expectedSegments, pathSegments } from '../pages/Charts';
import { DEMO_CLUSTER } from '../pages/ClusterPage';

// Charts that tell the truth, on the demo cluster's Metrics tab and a finding's evidence: every line of a
// multi-series chart is drawn from its own points, so it breaks only where its own data has a gap (compared with
// the very answer the page got from the API); a chart of several entities names each line's entity; with the
// projections on, the chosen window still starts every chart's time axis, and every chart shares one axis.

interface Series {
  id: string;
  label: string;
  entity_id: string;
  t: number[];
  values: (number | null)[];
  step_seconds: number;
}
interface Panel {
  id: string;
  title: string;
  series: Series[];
}
interface Volume {
  volume_id: string;
}
interface NodeMetrics {
  start: string;
  end: string;
  resolution_seconds: number;
  node: { store_address: string; instance_id: string | null; data_volume: Volume | null; raft_volume: Volume | null };
  panels: Panel[];
}

const isNodeMetrics = (r: Response) => /\/api\/v1\/clusters\/[^/]+\/metrics\?/.test(r.url()) && r.ok();

async function demoClusterId(page: Page): Promise<string> {
  const clusters = (await (await page.request.get('/api/v1/clusters')).json()) as { items: { id: string; name: string }[] };
  const demo = clusters.items.find((c) => c.name === DEMO_CLUSTER);
  expect(demo, 'the demo cluster').toBeDefined();
  return demo!.id;
}

/** Open the Metrics tab over `range` and return the node metrics the page drew (the API's answer to the page). */
async function openMetrics(page: Page, clusterId: string, range: '6h' | '24h'): Promise<NodeMetrics> {
  const answer = page.waitForResponse(isNodeMetrics);
  await page.goto(`/clusters/${clusterId}/metrics?range=${range}`);
  const metrics = (await (await answer).json()) as NodeMetrics;
  await waitForPanels(page, metrics);
  return metrics;
}

/** Wait until every panel's chart is on the page with its lines (each scrolled to: a plot is drawn when near view). */
async function waitForPanels(page: Page, metrics: NodeMetrics) {
  const charts = new Charts(page);
  await expect(page.locator('.metrics__grid figure.ts-chart')).toHaveCount(metrics.panels.length, { timeout: 20_000 });
  for (const panel of metrics.panels.filter((p) => p.series.length > 0)) {
    const figure = charts.byTitle(panel.title);
    await charts.interactive(figure);
    await expect(figure.locator('path.recharts-line-curve').first()).toHaveAttribute('d', /M/);
  }
}

/** Which entity a series is about, from its role prefix (the API names them data_, raft_, instance_, ec2_). */
test.describe('charts that tell the truth', () => {
  test.beforeEach(async ({ signInAsDemo }) => {
    await signInAsDemo();
  });

  for (const range of ['6h', '24h'] as const) {
    test(`metrics ${range}: each line breaks only at its own data's gaps, and names its entity`, async ({ page }) => {
      const clusterId = await demoClusterId(page);
      const metrics = await openMetrics(page, clusterId, range);
      const charts = new Charts(page);
      const multi = metrics.panels.filter((p) => p.series.length > 1);
      expect(multi.length, 'multi-series panels on the demo node').toBeGreaterThan(3);
      const measured: { panel: string; series: string; drawn: number; expected: number }[] = [];
      for (const panel of multi) {
        const figure = charts.byTitle(panel.title);
        const paths = await charts.seriesPaths(figure, panel.series.map((s) => s.id));
        for (const [i, s] of panel.series.entries()) {
          const step = Math.max(metrics.resolution_seconds, s.step_seconds);
          const expected = expectedSegments(s.t, s.values, step);
          const drawn = pathSegments(paths[i] ?? '');
          measured.push({ panel: panel.id, series: s.id, drawn, expected });
        }
        // a chart of several entities (a node's data and Raft volumes, its instance) names each line's entity
        const entities = new Set(panel.series.map((s) => s.entity_id));
        if (entities.size > 1) {
          const legend = await charts.legendSeries(figure);
          for (const s of panel.series) {
            const item = legend.find((l) => l.id === s.id);
            expect.soft(item?.text ?? '', `legend of ${s.id} in "${panel.title}"`).toContain(s.entity_id);
          }
        }
      }
      await test.info().attach(`segments-${range}.json`, { body: JSON.stringify(measured, null, 1), contentType: 'application/json' });
      for (const m of measured) {
        expect.soft(m.drawn, `${m.panel} / ${m.series}: SVG path pieces vs the API data's runs`).toBe(m.expected);
      }
      // the demo's data has no gaps in these windows: every line is one piece (the old merged rows broke them)
      expect(measured.filter((m) => m.expected === 1).length).toBeGreaterThan(measured.length / 2);
    });
  }

  test('metrics with projections: the window starts every time axis, and all charts share it', async ({ page }) => {
    const clusterId = await demoClusterId(page);
    const before = await openMetrics(page, clusterId, '24h');
    const answer = page.waitForResponse((r) => isNodeMetrics(r) && r.url().includes('projections=true'));
    await page.getByLabel(/Show projections/).check();
    const metrics = (await (await answer).json()) as NodeMetrics;
    expect(metrics.start).toBe(before.start);
    await waitForPanels(page, metrics);
    const charts = new Charts(page);
    const start = Date.parse(metrics.start);
    const end = Date.parse(metrics.end);
    const figures = await page.locator('.metrics__grid figure.ts-chart').all();
    const domains = [];
    for (const figure of figures) {
      if ((await figure.locator('[data-x-domain]').count()) === 0) continue; // a panel without data
      domains.push(await charts.xDomain(figure));
    }
    expect(domains.length).toBeGreaterThan(5);
    for (const domain of domains) {
      expect(domain![0], 'the axis starts at the chosen window start').toBe(start);
      // the forecast runs to the right of the window within a horizon of half of it (never 90 days)
      expect(domain![1]).toBeGreaterThan(end);
      expect(domain![1] - start).toBeLessThanOrEqual(1.5 * (end - start));
    }
    expect(new Set(domains.map((d) => d!.join(','))).size, 'one time axis for every chart').toBe(1);
    // and drawn alike: the charts of one row have x axes of one width
    const boxes = [];
    for (const figure of figures.slice(0, 2)) boxes.push(await charts.plotBox(figure));
    expect(Math.abs(boxes[0]!.width - boxes[1]!.width)).toBeLessThan(2);
    // a projection that reaches its ceiling after the horizon says so in its note
    const notes = await page.locator('.metrics__notes li').allTextContents();
    expect(notes.some((n) => n.startsWith('Projection:'))).toBe(true);
  });

  test("a finding over two stores names each store in its charts' legends", async ({ page }) => {
    // A fresh server needs its first minutes to simulate the demo fleet and run the advisor on it.
    test.setTimeout(240_000);
    const clusterId = await demoClusterId(page);
    const findings = async () =>
      ((await (
        await page.request.get(`/api/v1/clusters/${clusterId}/findings`, { params: { rule: 'block-cache-size' } })
      ).json()) as { items: { id: string }[] }).items;
    await expect.poll(async () => (await findings()).length, { timeout: 180_000, intervals: [5_000] }).toBeGreaterThan(0);
    const list = { items: await findings() };
    const findingId = list.items[0]!.id;
    const evidence = (await (await page.request.get(`/api/v1/findings/${findingId}/evidence/series`)).json()) as {
      step_seconds: number;
      series: { entity_id: string; entity_name: string; t: number[]; values: (number | null)[]; found: boolean }[];
    };
    expect(new Set(evidence.series.map((s) => s.entity_id)).size).toBeGreaterThan(1);
    await page.goto(`/clusters/${clusterId}/findings/${findingId}`);
    const charts = new Charts(page);
    await expect(page.locator('.evidence-charts figure.ts-chart').first()).toBeVisible({ timeout: 20_000 });
    const figures = await page.locator('.evidence-charts figure.ts-chart').all();
    let named = 0;
    for (const figure of figures) {
      const legend = await charts.legendSeries(figure);
      const paths = await charts.seriesPaths(figure, legend.map((l) => l.id));
      // the chart's series ids are "<index in the API answer>:<metric>:<entity>"
      const of = legend.map((l) => evidence.series[Number(l.id.split(':')[0])]!);
      const entities = new Set(of.map((s) => s.entity_id));
      for (const [i, l] of legend.entries()) {
        const s = of[i]!;
        if (entities.size > 1) {
          expect.soft(l.text, `legend of ${l.id}`).toContain(s.entity_name);
          named += 1;
        }
        expect.soft(pathSegments(paths[i] ?? ''), `${l.id}: pieces vs the API data's runs`).toBe(
          expectedSegments(s.t, s.values, evidence.step_seconds),
        );
      }
    }
    expect(named, 'legend entries that name their store').toBeGreaterThan(1);
  });
});
