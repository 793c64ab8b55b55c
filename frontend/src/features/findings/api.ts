import { queryOptions, useMutation, useQueries, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { api } from '@/api/client';
import { unwrap } from '@/api/errors';
import { findingSummarySeverityValues, findingSummaryStatusValues, type paths } from '@/api/schema';
import { ACTIVE_FINDINGS, ACTIVE_FINDINGS_SORT, findingAddress, getEvidenceSeries, getFinding, getFindings } from './requests';

type ListOp = paths['/api/v1/clusters/{cluster_id}/findings']['get'];
export type FindingList = ListOp['responses'][200]['content']['application/json'];
export type FindingSummary = FindingList['items'][number];
export type Finding = paths['/api/v1/findings/{finding_id}']['get']['responses'][200]['content']['application/json'];
export type FindingChange = Finding['changes'][number];
export type Severity = FindingSummary['severity'];
export type FindingStatus = FindingSummary['status'];
export type SeverityCounts = FindingList['counts'];

/** Most severe first: the order the API's schema lists them in (domain.model.Severity, defined once). */
export const SEVERITIES: readonly Severity[] = findingSummarySeverityValues;
export const STATUSES: readonly FindingStatus[] = findingSummaryStatusValues;

export interface FindingFilters {
  status: FindingStatus[];
  severity: Severity[];
  rule: string[];
}

export const NO_FILTERS: FindingFilters = { status: [], severity: [], rule: [] };
/** What the list shows by default: what needs attention (snoozed and resolved findings are a tick away). */
export const ACTIVE_STATUSES: FindingStatus[] = ['open', 'acknowledged'];
export const DEFAULT_FILTERS: FindingFilters = { status: ACTIVE_STATUSES, severity: [], rule: [] };

export const findingsKey = (clusterId: string) => ['findings', clusterId] as const;

/** The list's order: most severe first, or by the server's impact_score (headroom gained) first. */
export type FindingSort = NonNullable<NonNullable<ListOp['parameters']['query']>['sort']>;

export function findingsQuery(clusterId: string, filters: FindingFilters = NO_FILTERS, sort: FindingSort = 'severity') {
  return queryOptions({
    queryKey: [...findingsKey(clusterId), 'list', filters, sort],
    queryFn: () => unwrap(getFindings(api, clusterId, filters, sort)),
  });
}

export function useFindings(clusterId: string, filters: FindingFilters = NO_FILTERS, sort: FindingSort = 'severity') {
  return useQuery(findingsQuery(clusterId, filters, sort));
}

/** Open or acknowledged findings, most impactful first: one query (one request) shared by the overview's severity
 * counts and its top findings (the counts do not depend on the order). */
export { ACTIVE_FINDINGS } from './requests';

export function activeFindingsQuery(clusterId: string) {
  return findingsQuery(clusterId, ACTIVE_FINDINGS, ACTIVE_FINDINGS_SORT);
}

export function useActiveFindings(clusterId: string) {
  return useQuery(activeFindingsQuery(clusterId));
}

const findingKey = (findingId: string) => ['finding', findingId] as const;

function fetchFinding(findingId: string) {
  return unwrap(getFinding(api, findingId));
}

export function useFinding(findingId: string) {
  return useQuery({ queryKey: findingKey(findingId), queryFn: () => fetchFinding(findingId) });
}

/** The details of several findings at once (e.g. the changes a selection would make). */
export function useFindingDetails(findingIds: string[]) {
  return useQueries({
    queries: findingIds.map((id) => ({ queryKey: findingKey(id), queryFn: () => fetchFinding(id) })),
  });
}

function evidenceSeriesQuery(findingId: string) {
  return {
    queryKey: [...findingKey(findingId), 'evidence-series'] as const,
    queryFn: () => unwrap(getEvidenceSeries(api, findingId)),
  };
}

/** The points of a finding's evidence series over its window (GET /findings/{id}/evidence/series). */
export function useEvidenceSeries(findingId: string) {
  return useQuery(evidenceSeriesQuery(findingId));
}

/**
 * At the app's start, when the address opens a finding's page: ask for the finding and its evidence series at
 * once, beside the session and the page's code, rather than once the cluster has arrived and the page is drawn
 * (its evidence chart waits for both; useFinding and useEvidenceSeries find them under way).
 */
export function prefetchFindingForAddress(queryClient: QueryClient, pathname: string) {
  const findingId = findingAddress(pathname);
  if (findingId === null) return;
  void queryClient.prefetchQuery({ queryKey: findingKey(findingId), queryFn: () => fetchFinding(findingId) });
  void queryClient.prefetchQuery(evidenceSeriesQuery(findingId));
}

export type FindingAction = 'acknowledge' | 'resolve' | 'reopen' | { snoozeUntil: string };

function runAction(findingId: string, action: FindingAction) {
  const path = { finding_id: findingId };
  if (typeof action === 'object') {
    return unwrap(api.POST('/api/v1/findings/{finding_id}/snooze', { params: { path }, body: { until: action.snoozeUntil } }));
  }
  switch (action) {
    case 'acknowledge':
      return unwrap(api.POST('/api/v1/findings/{finding_id}/acknowledge', { params: { path } }));
    case 'resolve':
      return unwrap(api.POST('/api/v1/findings/{finding_id}/resolve', { params: { path } }));
    case 'reopen':
      return unwrap(api.POST('/api/v1/findings/{finding_id}/reopen', { params: { path } }));
  }
}

export function useFindingAction(finding: Pick<Finding, 'id' | 'cluster_id'>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (action: FindingAction) => runAction(finding.id, action),
    onSuccess: (updated) => {
      queryClient.setQueryData(findingKey(finding.id), updated);
      void queryClient.invalidateQueries({ queryKey: findingsKey(finding.cluster_id) });
    },
  });
}
