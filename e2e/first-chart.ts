// When a page first draws a chart line, noted by a script that runs before the app's (the page-times benchmark and
// the first-chart profile both read it).

/**
 * A chart's data line, either drawing: the plain SVG first paint (components/TimeSeriesChart/PlainChart.tsx, which
 * draws a path only for a series with points, from those points: never a placeholder) or the Recharts chart that
 * replaces it. Both are SVG paths with a non-empty `d`.
 */
export const CHART_LINE = 'path.ts-chart__plain-line[d]:not([d=""]), path.recharts-line-curve[d]:not([d=""])';

/** A data line inside `scope` (a CSS selector), as a selector. */
export function chartLineIn(scope: string): string {
  return CHART_LINE.split(', ')
    .map((line) => `${scope} ${line}`)
    .join(', ');
}

/** The Metrics tab's first chart line: a data line in the Metrics grid. */
export const METRICS_CHART_LINE = chartLineIn('.metrics__grid');

declare global {
  interface Window {
    __firstChartAt?: number;
  }
}

/**
 * For `page.addInitScript(watchFirstChart, selector)`: note in `window.__firstChartAt` when `selector` first matches,
 * with a user-timing mark (`headroom-first-chart`) at that moment for a trace to find. Self-contained: Playwright
 * sends its source to the page.
 */
export function watchFirstChart(selector: string) {
  const observer = new MutationObserver(() => {
    if (window.__firstChartAt === undefined && document.querySelector(selector)) {
      window.__firstChartAt = performance.now();
      performance.mark('headroom-first-chart');
      observer.disconnect();
    }
  });
  const start = () => observer.observe(document.documentElement, { subtree: true, childList: true, attributes: true });
  if (document.documentElement) start();
  else document.addEventListener('DOMContentLoaded', start);
}
