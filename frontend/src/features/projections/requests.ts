// A cluster overview's projections request, with no React or query library in it: the app's query (api.ts) and the
// page's first-requests script (src/boot.ts) build it here, so both ask for the same URL.
import type { ApiClient } from '@/api/client';

/** The cluster's projections as a list of days, without the forecast paths (GET /clusters/{id}/projections). */
export function getProjectionDays(client: ApiClient, clusterId: string) {
  return client.GET('/api/v1/clusters/{cluster_id}/projections', {
    params: { path: { cluster_id: clusterId }, query: { bands: false } },
  });
}
