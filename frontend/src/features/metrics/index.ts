export { MetricsView } from './components/MetricsView';
export { prefetchMetricsView, RANGES, rangeOf, type RangeId } from './api';
