import { useEffect, useSyncExternalStore, type ComponentType } from 'react';
import { PlainTimeSeriesChart } from './PlainChart';
import type { TimeSeriesChartProps } from './frame';

// Recharts is the heaviest library of the app: it and the chart come in their own chunk, so a page's first load
// carries none of it (the 150 KB initial-JavaScript budget, bench/frontend_budget.py). Until it is in, a chart is
// drawn as plain SVG (PlainChart.tsx: the same lines, axes and limits, in the same box), so the first chart line
// waits for the data only, not for Recharts' code to be fetched, parsed and run; the Recharts chart (adding the
// tooltip) then takes its place.
let loaded: ComponentType<TimeSeriesChartProps> | undefined;
let loading: Promise<ComponentType<TimeSeriesChartProps>> | undefined;
const listeners = new Set<() => void>();
const load = () =>
  (loading ??= import('./TimeSeriesChart').then((module) => {
    loaded = module.TimeSeriesChart;
    listeners.forEach((listener) => listener());
    return module.TimeSeriesChart;
  }));

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Start fetching and evaluating the chart's chunk now (a chart asks for it itself once its plain drawing is shown). */
export function preloadTimeSeriesChart(): void {
  void load();
}

/** The time-series chart: plain SVG at once, the Recharts chart (TimeSeriesChart.tsx) once its chunk is in. */
export function TimeSeriesChart(props: TimeSeriesChartProps) {
  const ready = useSyncExternalStore(subscribe, () => loaded !== undefined);
  useEffect(() => {
    if (ready) return;
    // Once the plain drawing is on screen (the frame after this one's paint): Recharts' code, fetched and run,
    // then takes the main thread after the first charts are seen, not before.
    let timer = 0;
    const frame = requestAnimationFrame(() => {
      timer = window.setTimeout(() => void load(), 0);
    });
    return () => {
      cancelAnimationFrame(frame);
      window.clearTimeout(timer);
    };
  }, [ready]);
  if (ready && loaded) {
    const Loaded = loaded;
    return <Loaded {...props} />;
  }
  return <PlainTimeSeriesChart {...props} />;
}
