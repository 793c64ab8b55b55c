// The request every page of a cluster makes first (the cluster), with no React or query library in it: the app's
// query (api.ts) and the page's first-requests script (src/boot.ts), which starts it before the app's code has
// arrived, build it here, so both ask for the same URL.
import type { ApiClient } from '@/api/client';

/** A cluster (GET /clusters/{id}). */
export function getCluster(client: ApiClient, clusterId: string) {
  return client.GET('/api/v1/clusters/{cluster_id}', { params: { path: { cluster_id: clusterId } } });
}

const CLUSTER_PATH = /^\/clusters\/([^/]+)(?:\/|$)/;

/** The cluster a cluster page's address opens, or null for any other page. */
export function clusterAddress(pathname: string): string | null {
  const match = CLUSTER_PATH.exec(pathname);
  return match?.[1] ? decodeURIComponent(match[1]) : null;
}
