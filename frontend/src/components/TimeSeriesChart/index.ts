export { TimeSeriesChart, toRows } from './TimeSeriesChart';
export type { Ceiling, ForecastBand, ForecastBandPoint, TimeSeries, TimeSeriesChartProps, TimeSeriesPoint } from './TimeSeriesChart';
export { formatTick, formatTime, niceAxisMax } from './format';
