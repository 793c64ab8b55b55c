import { lazy, Suspense } from 'react';
import type { TimeSeriesChartProps } from './TimeSeriesChart';

// Recharts is the heaviest library of the app: it and the chart come in their own chunk, fetched when the first
// chart is drawn, so a page's first load carries none of it (the 150 KB initial-JavaScript budget, bench/frontend_budget.py).
const load = () => import('./TimeSeriesChart');
const Chart = lazy(() => load().then((module) => ({ default: module.TimeSeriesChart })));

/**
 * Start fetching and evaluating the chart's chunk now, e.g. when a page that draws charts starts loading, so that
 * it is ready when the page's data arrives instead of being fetched after it (the Metrics tab's first chart).
 */
export function preloadTimeSeriesChart(): void {
  void load();
}

/** The time-series chart (TimeSeriesChart.tsx), loaded on first use; its box keeps its height meanwhile. */
export function TimeSeriesChart(props: TimeSeriesChartProps) {
  return (
    <Suspense
      fallback={
        <div className="ts-chart ts-chart--loading" aria-busy="true" style={{ minHeight: props.height ?? 280 }}>
          <p className="muted">Loading the chart “{props.title}”…</p>
        </div>
      }
    >
      <Chart {...props} />
    </Suspense>
  );
}
