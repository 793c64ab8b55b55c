export {
  findingsKey,
  NO_FILTERS,
  DEFAULT_FILTERS,
  SEVERITIES,
  STATUSES,
  useFindingDetails,
  useFindings,
  type Finding,
  type FindingChange,
  type FindingFilters,
  type FindingStatus,
  type Severity,
} from './api';
export { describeForecast } from './evidence';
export { groupRows, type FindingGroup, type FindingRow, type RelatedFinding } from './groups';
export { FindingDetailPanel } from './components/FindingDetailPanel';
export { FindingSelector } from './components/FindingSelector';
export { FindingsPanel } from './components/FindingsPanel';
export { SeverityCountsPanel } from './components/SeverityCountsPanel';
export { TopFindings } from './components/TopFindings';
