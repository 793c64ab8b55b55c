// A finding page's first two requests and a cluster's list of findings, with no React or query library in them: the
// app's queries (api.ts) and the page's first-requests script (src/boot.ts), which starts them before the app's code
// has arrived, build them here, so both ask for the same URLs.
import type { ApiClient } from '@/api/client';
import { addressParam } from '@/lib/addressParam';
import type { FindingFilters, FindingSort } from './api';

/** A cluster's findings (GET /clusters/{id}/findings), filtered and in `sort` order. */
export function getFindings(client: ApiClient, clusterId: string, filters: FindingFilters, sort: FindingSort) {
  return client.GET('/api/v1/clusters/{cluster_id}/findings', {
    params: {
      path: { cluster_id: clusterId },
      query: {
        status: filters.status,
        severity: filters.severity,
        rule: filters.rule,
        // severity is the API's default order: leave it out of the address
        sort: sort === 'severity' ? undefined : sort,
      },
    },
  });
}

/** What a cluster's overview lists: what needs attention, by impact (api.ts activeFindingsQuery). */
export const ACTIVE_FINDINGS: FindingFilters = { status: ['open', 'acknowledged'], severity: [], rule: [] };
export const ACTIVE_FINDINGS_SORT: FindingSort = 'impact';

/** A finding (GET /findings/{id}). */
export function getFinding(client: ApiClient, findingId: string) {
  return client.GET('/api/v1/findings/{finding_id}', { params: { path: { finding_id: findingId } } });
}

/** The points of a finding's evidence series over its window (GET /findings/{id}/evidence/series). */
export function getEvidenceSeries(client: ApiClient, findingId: string) {
  return client.GET('/api/v1/findings/{finding_id}/evidence/series', { params: { path: { finding_id: findingId } } });
}

const FINDING_PATH = /^\/clusters\/[^/]+\/findings\/([^/]+)\/?$/;

/** The finding a finding's page address opens, or null for any other page. */
export function findingAddress(pathname: string): string | null {
  return addressParam(FINDING_PATH, pathname);
}
