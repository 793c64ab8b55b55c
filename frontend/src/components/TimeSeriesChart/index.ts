export { TimeSeriesChart, toRows } from './TimeSeriesChart';
export type { Ceiling, ForecastBand, ForecastBandPoint, TimeSeries, TimeSeriesChartProps, TimeSeriesPoint } from './TimeSeriesChart';
export { formatValue, formatTick, formatTime, type Unit } from './format';
