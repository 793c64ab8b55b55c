import type { FindingStatus, Severity } from '../api';

export const SEVERITY_LABEL: Record<Severity, string> = { critical: 'Critical', warning: 'Warning', info: 'Info' };
export const STATUS_LABEL: Record<FindingStatus, string> = {
  open: 'Open',
  acknowledged: 'Acknowledged',
  snoozed: 'Snoozed',
  resolved: 'Resolved',
};

export function findingPath(clusterId: string, findingId: string): string {
  return `/clusters/${clusterId}/findings/${findingId}`;
}
