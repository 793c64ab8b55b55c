// A cluster overview's change ledger request, with no React or query library in it: the app's query (api.ts) and
// the page's first-requests script (src/boot.ts) build it here, so both ask for the same URL.
import type { ApiClient } from '@/api/client';

/** The cluster's change ledger (GET /clusters/{id}/changes). */
export function getChanges(client: ApiClient, clusterId: string) {
  return client.GET('/api/v1/clusters/{cluster_id}/changes', { params: { path: { cluster_id: clusterId } } });
}
