export { MetricsView } from './components/MetricsView';
export { RANGES, type RangeId } from './api';
