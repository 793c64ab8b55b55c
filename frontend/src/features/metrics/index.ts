export { MetricsView } from './components/MetricsView';
export { prefetchMetricsForAddress, RANGES, rangeOf, type RangeId } from './api';
