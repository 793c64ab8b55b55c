// TimeSeriesChart is the lazily loaded one (Recharts in its own chunk); the types cost nothing at run time.
export { preloadTimeSeriesChart, TimeSeriesChart } from './LazyTimeSeriesChart';
export type { Ceiling, ForecastBand, ForecastBandPoint, TimeSeries, TimeSeriesChartProps, TimeSeriesPoint } from './TimeSeriesChart';
export { formatTick, formatTime } from './format';
export { niceAxisMax } from './layout';
export { drawnLine, findGaps, GAP_STEPS, segmentCount, type Gap, type Point } from './series';
