import { queryOptions, useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { api } from '@/api/client';
import { unwrap } from '@/api/errors';
import type { paths } from '@/api/schema';
import { awsConnectionsQuery, prometheusSourcesQuery } from '@/api/source-lists';
import { clusterAddress, getCluster, getClusterPreferences, getNodes } from './requests';

export type ClusterList = paths['/api/v1/clusters']['get']['responses'][200]['content']['application/json'];
export type Cluster = ClusterList['items'][number];
export type ClusterDetail = paths['/api/v1/clusters/{cluster_id}']['get']['responses'][200]['content']['application/json'];
export type NodeList = paths['/api/v1/clusters/{cluster_id}/nodes']['get']['responses'][200]['content']['application/json'];
export type TikvNode = NodeList['items'][number];
export type NodeVolume = NonNullable<TikvNode['volumes']>[number];
export type NodeInstance = NonNullable<TikvNode['instance']>;
type AwsConnections = paths['/api/v1/sources/aws']['get']['responses'][200]['content']['application/json'];
type PrometheusSources = paths['/api/v1/sources/prometheus']['get']['responses'][200]['content']['application/json'];
export type SourceHealthStatus = AwsConnections[number]['health']['status'];
export type AdviseQueued = paths['/api/v1/clusters/{cluster_id}/advise']['post']['responses'][202]['content']['application/json'];

export type Fleet = paths['/api/v1/fleet']['get']['responses'][200]['content']['application/json'];
export type ClusterHealth = Fleet['items'][number];

export const clustersQueryKey = ['clusters', 'list'] as const;
export const clusterQueryKey = (clusterId: string) => ['clusters', clusterId] as const;


/** How often a cluster whose first analysis is running is asked again. */
const FIRST_ANALYSIS_POLL_MS = 5_000;

export function clustersQuery() {
  return queryOptions({ queryKey: clustersQueryKey, queryFn: () => unwrap(api.GET('/api/v1/clusters')) });
}

export function useClusters() {
  return useQuery(clustersQuery());
}

export function fleetQuery() {
  return queryOptions({ queryKey: ['clusters', 'fleet'], queryFn: () => unwrap(api.GET('/api/v1/fleet')) });
}

/** The fleet overview: each cluster's health, headroom score, nearest ceiling, spend and savings. */
export function useFleet() {
  return useQuery({
    ...fleetQuery(),
    // A cluster whose first analysis is still running is asked again until its findings are in.
    refetchInterval: (query) => (query.state.data?.items.some((c) => c.advised_at === null) ? FIRST_ANALYSIS_POLL_MS : false),
  });
}

export function clusterQuery(clusterId: string) {
  return queryOptions({
    queryKey: clusterQueryKey(clusterId),
    queryFn: () => unwrap(getCluster(api, clusterId)),
  });
}

/**
 * At the app's start, when the address opens one of a cluster's pages: ask for the cluster at once, beside the
 * session and the page's code, rather than once the page's code has arrived and the cluster's layout is drawn
 * (every tab waits for it; useCluster finds it under way).
 */
export function prefetchClusterForAddress(queryClient: QueryClient, pathname: string) {
  const clusterId = clusterAddress(pathname);
  if (clusterId !== null) void queryClient.prefetchQuery(clusterQuery(clusterId));
}

export function useCluster(clusterId: string) {
  return useQuery({
    ...clusterQuery(clusterId),
    refetchInterval: (query) => (query.state.data && query.state.data.advised_at === null ? FIRST_ANALYSIS_POLL_MS : false),
  });
}

export function nodesQuery(clusterId: string) {
  return queryOptions({
    queryKey: ['clusters', clusterId, 'nodes'],
    queryFn: () =>
      unwrap(getNodes(api, clusterId)),
  });
}

export function useNodes(clusterId: string) {
  return useQuery(nodesQuery(clusterId));
}

/** One data source's health, as a badge shows it. */
export interface SourceBadge {
  key: string;
  kind: 'AWS' | 'Prometheus' | 'Demo';
  name: string;
  status: SourceHealthStatus | 'simulated';
  lastError: string | null;
  lastSuccessAt: string | null;
}

/** The sources feeding a cluster: the org's AWS connections and the Prometheus sources for this cluster. */
export function sourceBadges(
  clusterId: string,
  aws: AwsConnections,
  prometheus: PrometheusSources,
  isDemo: boolean,
): SourceBadge[] {
  const badges: SourceBadge[] = [];
  if (isDemo) {
    badges.push({ key: 'demo', kind: 'Demo', name: 'demo fleet', status: 'simulated', lastError: null, lastSuccessAt: null });
  }
  for (const source of prometheus) {
    if (source.cluster_id !== null && source.cluster_id !== undefined && source.cluster_id !== clusterId) continue;
    badges.push({
      key: `prometheus-${source.id}`,
      kind: 'Prometheus',
      name: source.name,
      status: source.health.status,
      lastError: source.health.last_error ?? null,
      lastSuccessAt: source.health.last_success_at ?? null,
    });
  }
  for (const connection of aws) {
    badges.push({
      key: `aws-${connection.id}`,
      kind: 'AWS',
      name: connection.name,
      status: connection.health.status,
      lastError: connection.health.last_error ?? null,
      lastSuccessAt: connection.health.last_success_at ?? null,
    });
  }
  return badges;
}

export function sourceBadgesQuery(clusterId: string, isDemo: boolean) {
  return queryOptions({
    queryKey: ['clusters', clusterId, 'sources', isDemo],
    // the lists as the sources settings read them (api/source-lists.ts): one request each, whoever asks first
    queryFn: async ({ client }) => {
      const [aws, prometheus] = await Promise.all([
        client.fetchQuery(awsConnectionsQuery()),
        client.fetchQuery(prometheusSourcesQuery()),
      ]);
      return sourceBadges(clusterId, aws, prometheus, isDemo);
    },
  });
}

export function useSourceBadges(clusterId: string, isDemo: boolean) {
  return useQuery(sourceBadgesQuery(clusterId, isDemo));
}

export function useAdviseNow(clusterId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () =>
      unwrap(api.POST('/api/v1/clusters/{cluster_id}/advise', { params: { path: { cluster_id: clusterId } } })),
    onSuccess: () => {
      // The job runs in the background; findings refresh when the person next looks (and on the next fetch).
      void queryClient.invalidateQueries({ queryKey: ['findings', clusterId] });
    },
  });
}

export type ClusterPreferences =
  paths['/api/v1/clusters/{cluster_id}/recommendation-preferences']['get']['responses'][200]['content']['application/json'];
type ClusterPreferencesUpdate =
  paths['/api/v1/clusters/{cluster_id}/recommendation-preferences']['put']['requestBody']['content']['application/json'];
const preferencesKey = (clusterId: string) => ['clusters', clusterId, 'recommendation-preferences'] as const;

/** The cluster's lookback: its own (null: its organisation's) and the one in force. */
export function clusterPreferencesQuery(clusterId: string) {
  return queryOptions({
    queryKey: preferencesKey(clusterId),
    queryFn: () =>
      unwrap(getClusterPreferences(api, clusterId)),
  });
}

export function useClusterPreferences(clusterId: string) {
  return useQuery(clusterPreferencesQuery(clusterId));
}

export function useSetClusterPreferences(clusterId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: ClusterPreferencesUpdate) =>
      unwrap(
        api.PUT('/api/v1/clusters/{cluster_id}/recommendation-preferences', {
          params: { path: { cluster_id: clusterId } },
          body,
        }),
      ),
    onSuccess: (data) => queryClient.setQueryData(preferencesKey(clusterId), data),
  });
}
