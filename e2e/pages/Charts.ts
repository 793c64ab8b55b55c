import { expect, type Locator, type Page } from '@playwright/test';

/**
 * Scroll an element into view. A panel can be drawn anew while the page's data arrives (its plain drawing, then
 * Recharts), so the element found can be replaced between finding and scrolling ("Element is not attached to the
 * DOM"): the scroll is retried on a fresh lookup of the locator until it lands.
 */
export async function scrollTo(target: Locator): Promise<void> {
  await expect(async () => {
    await target.scrollIntoViewIfNeeded({ timeout: 5_000 });
  }).toPass({ timeout: 30_000 });
}

/** A series id as the chart's CSS class names it (components/TimeSeriesChart: every other character becomes _). */
export function cssId(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** The time-series charts of a page (components/TimeSeriesChart): figures named by their title. */
export class Charts {
  constructor(private readonly page: Page) {}

  /** Every chart figure of the page (a figure with a plot or an empty message, and its legend). */
  all(): Locator {
    return this.page.locator('figure.ts-chart');
  }

  /** The chart titled `title` (its figcaption's title). */
  byTitle(title: string): Locator {
    return this.page.getByRole('figure', { name: title, exact: true });
  }

  /**
   * Scroll the chart into view and wait until it is its interactive (Recharts) drawing, or its empty message: a
   * plot far below the fold is drawn only when scrolled near, and a chart's first paint is a plain SVG drawing of
   * the same lines (components/TimeSeriesChart/PlainChart.tsx), replaced once the chart's code is in. The checks
   * below read Recharts' elements; a component test holds the plain drawing to the same paths.
   */
  async interactive(figure: Locator): Promise<void> {
    await scrollTo(figure);
    await expect(figure.locator('.recharts-surface, .ts-chart__empty').first()).toBeAttached({ timeout: 30_000 });
  }

  /** The `d` of each line's SVG path, in the order the chart draws its series (the order of its legend). */
  async linePaths(figure: Locator): Promise<string[]> {
    await this.interactive(figure);
    return figure.locator('path.recharts-line-curve').evaluateAll((paths) => paths.map((p) => p.getAttribute('d') ?? ''));
  }

  /**
   * The `d` of the SVG path each series draws ("" when it draws none: no point to draw), found by the series'
   * class; a chart without those classes (before they existed) by the order of its lines.
   */
  async seriesPaths(figure: Locator, seriesIds: string[]): Promise<string[]> {
    await this.interactive(figure);
    if ((await figure.locator('.ts-chart__line').count()) === 0) {
      const paths = await this.linePaths(figure);
      return seriesIds.map((_, i) => paths[i] ?? '');
    }
    const out: string[] = [];
    for (const id of seriesIds) {
      const path = figure.locator(`.ts-chart__line--${cssId(id)} path.recharts-line-curve`);
      out.push((await path.count()) === 0 ? '' : ((await path.first().getAttribute('d')) ?? ''));
    }
    return out;
  }

  /** The legend entries of the chart's series (not its ceilings or band): series id and text. */
  async legendSeries(figure: Locator): Promise<{ id: string; text: string }[]> {
    return figure.locator('ul.ts-chart__legend li[data-series-id]').evaluateAll((items) =>
      items.map((li) => ({ id: li.getAttribute('data-series-id') ?? '', text: li.textContent ?? '' })),
    );
  }

  /** The time axis a chart draws, [start, end] in epoch ms (its plot's data-x-domain). */
  async xDomain(figure: Locator): Promise<[number, number] | null> {
    const text = await figure.locator('[data-x-domain]').getAttribute('data-x-domain');
    if (!text) return null;
    const [start, end] = text.split(',').map(Number);
    return [start!, end!];
  }

  /** Where a chart's plot area sits on the page (its x axis line): left and width in CSS pixels. */
  async plotBox(figure: Locator): Promise<{ x: number; width: number } | null> {
    await this.interactive(figure);
    const box = await figure.locator('.recharts-xAxis line.recharts-cartesian-axis-line').boundingBox();
    return box ? { x: box.x, width: box.width } : null;
  }
}

/** How many separate pieces an SVG path draws: its move-to commands. */
export function pathSegments(d: string): number {
  return (d.match(/M/g) ?? []).length;
}

// The chart's gap rule (components/TimeSeriesChart/series.ts GAP_STEPS): two points more than 1.5 of the series'
// steps apart have no data between them. The step is the API's step_seconds of the series, at least the chart's.
const GAP_STEPS = 1.5;

/** The pieces a series' line should have, from the API's points: a run of points breaks at a null or a gap. */
export function expectedSegments(t: number[], values: (number | null)[], stepSeconds: number): number {
  let segments = 0;
  let previous: number | undefined;
  let running = false;
  values.forEach((v, i) => {
    if (v === null) {
      running = false;
      return;
    }
    const at = t[i]!;
    if (!running || (previous !== undefined && at - previous > GAP_STEPS * stepSeconds)) segments += 1;
    running = true;
    previous = at;
  });
  return segments;
}
