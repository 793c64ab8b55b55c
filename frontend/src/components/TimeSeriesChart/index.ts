export { TimeSeriesChart, toRows } from './TimeSeriesChart';
export type { Ceiling, ForecastBand, ForecastBandPoint, TimeSeries, TimeSeriesChartProps, TimeSeriesPoint } from './TimeSeriesChart';
export { formatDuration, formatTick, formatTime, formatValue, niceAxisMax, type Unit } from './format';
