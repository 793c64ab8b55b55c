export { MetricsView } from './components/MetricsView';
export { RANGES, rangeOf, type RangeId } from './api';
