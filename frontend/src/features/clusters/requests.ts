// The requests a cluster's pages make first (the cluster; its overview's nodes and lookback), with no React or query
// library in them: the app's queries (api.ts) and the page's first-requests script (src/boot.ts), which starts them
// before the app's code has arrived, build them here, so both ask for the same URLs.
import type { ApiClient } from '@/api/client';
import { addressParam } from '@/lib/addressParam';

/** A cluster (GET /clusters/{id}). */
export function getCluster(client: ApiClient, clusterId: string) {
  return client.GET('/api/v1/clusters/{cluster_id}', { params: { path: { cluster_id: clusterId } } });
}

/** The cluster's nodes (GET /clusters/{id}/nodes). */
export function getNodes(client: ApiClient, clusterId: string) {
  return client.GET('/api/v1/clusters/{cluster_id}/nodes', { params: { path: { cluster_id: clusterId } } });
}

/** The cluster's lookback, its own and the one in force (GET /clusters/{id}/recommendation-preferences). */
export function getClusterPreferences(client: ApiClient, clusterId: string) {
  return client.GET('/api/v1/clusters/{cluster_id}/recommendation-preferences', {
    params: { path: { cluster_id: clusterId } },
  });
}

const CLUSTER_PATH = /^\/clusters\/([^/]+)(?:\/|$)/;

/** The cluster a cluster page's address opens, or null for any other page. */
export function clusterAddress(pathname: string): string | null {
  return addressParam(CLUSTER_PATH, pathname);
}

const OVERVIEW_PATH = /^\/clusters\/([^/]+)\/?$/;

/** The cluster whose overview an address opens, or null for any other page. */
export function overviewAddress(pathname: string): string | null {
  return addressParam(OVERVIEW_PATH, pathname);
}
