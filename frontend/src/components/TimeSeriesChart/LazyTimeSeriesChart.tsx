import { lazy, Suspense, type ComponentType } from 'react';
import type { TimeSeriesChartProps } from './TimeSeriesChart';

// Recharts is the heaviest library of the app: it and the chart come in their own chunk, fetched when the first
// chart is drawn, so a page's first load carries none of it (the 150 KB initial-JavaScript budget, bench/frontend_budget.py).
let loaded: ComponentType<TimeSeriesChartProps> | undefined;
let loading: Promise<ComponentType<TimeSeriesChartProps>> | undefined;
const load = () =>
  (loading ??= import('./TimeSeriesChart').then((module) => {
    loaded = module.TimeSeriesChart;
    return module.TimeSeriesChart;
  }));
const Chart = lazy(() => load().then((chart) => ({ default: chart })));

/**
 * Start fetching and evaluating the chart's chunk now, e.g. when a page that draws charts starts loading, so that
 * it is ready when the page's data arrives instead of being fetched after it (the Metrics tab's first chart).
 */
export function preloadTimeSeriesChart(): void {
  void load();
}

/** The time-series chart (TimeSeriesChart.tsx), loaded on first use; its box keeps its height meanwhile. */
export function TimeSeriesChart(props: TimeSeriesChartProps) {
  // Once the chunk is in (preloadTimeSeriesChart), the chart is drawn at once: a lazy component suspends on its
  // first render even then, and React holds back what a suspended boundary reveals by up to 300 ms.
  if (loaded) {
    const Loaded = loaded;
    return <Loaded {...props} />;
  }
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
