// A cluster overview's apply settings request, with no React or query library in it: the app's query (api.ts) and
// the page's first-requests script (src/boot.ts) build it here, so both ask for the same URL.
import type { ApiClient } from '@/api/client';

/** Whether changes may be applied to the cluster, and how (GET /clusters/{id}/apply-settings). */
export function getApplySettings(client: ApiClient, clusterId: string) {
  return client.GET('/api/v1/clusters/{cluster_id}/apply-settings', { params: { path: { cluster_id: clusterId } } });
}
