// TimeSeriesChart is the lazily loaded one (plain SVG first, Recharts from its own chunk after); types cost nothing.
export { preloadTimeSeriesChart, TimeSeriesChart } from './LazyTimeSeriesChart';
export type { Ceiling, ForecastBand, ForecastBandPoint, TimeSeries, TimeSeriesChartProps, TimeSeriesPoint } from './frame';
export { formatTick, formatTime } from './format';
export { niceAxisMax } from './layout';
export { drawnLine, findGaps, GAP_STEPS, segmentCount, type Gap, type Point } from './series';
