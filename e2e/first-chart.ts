// When a page first draws a chart line, noted by a script that runs before the app's (the page-times benchmark and
// the first-chart profile both read it).

/** The Metrics tab's first chart line: an SVG path with a `d` in the Metrics grid. */
export const METRICS_CHART_LINE = '.metrics__grid path.recharts-line-curve[d]';

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
