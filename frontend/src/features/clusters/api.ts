import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '@/api/client';
import { unwrap } from '@/api/errors';
import type { paths } from '@/api/schema';

export type ClusterList = paths['/api/v1/clusters']['get']['responses'][200]['content']['application/json'];
export type Cluster = ClusterList['items'][number];
export type ClusterDetail = paths['/api/v1/clusters/{cluster_id}']['get']['responses'][200]['content']['application/json'];
export type NodeList = paths['/api/v1/clusters/{cluster_id}/nodes']['get']['responses'][200]['content']['application/json'];
export type TikvNode = NodeList['items'][number];
type AwsConnections = paths['/api/v1/sources/aws']['get']['responses'][200]['content']['application/json'];
type PrometheusSources = paths['/api/v1/sources/prometheus']['get']['responses'][200]['content']['application/json'];
export type SourceHealthStatus = AwsConnections[number]['health']['status'];
export type AdviseQueued = paths['/api/v1/clusters/{cluster_id}/advise']['post']['responses'][202]['content']['application/json'];

export const clustersQueryKey = ['clusters', 'list'] as const;
export const clusterQueryKey = (clusterId: string) => ['clusters', clusterId] as const;

/** The tag the backend puts on the simulated demo cluster (services/demo.py DEMO_TAG). */
export const DEMO_TAG = 'headroom.demo';

export function useClusters() {
  return useQuery({
    queryKey: clustersQueryKey,
    queryFn: () => unwrap(api.GET('/api/v1/clusters')),
  });
}

export function useCluster(clusterId: string) {
  return useQuery({
    queryKey: clusterQueryKey(clusterId),
    queryFn: () => unwrap(api.GET('/api/v1/clusters/{cluster_id}', { params: { path: { cluster_id: clusterId } } })),
  });
}

export function useNodes(clusterId: string) {
  return useQuery({
    queryKey: ['clusters', clusterId, 'nodes'],
    queryFn: () =>
      unwrap(api.GET('/api/v1/clusters/{cluster_id}/nodes', { params: { path: { cluster_id: clusterId } } })),
  });
}

/** The EC2 and EBS inventory of a cluster, as its snapshot carries it. */
export interface Inventory {
  nodes: InventoryNode[];
  volumes: InventoryVolume[];
}

export interface InventoryNode {
  address: string;
  instanceId: string | null;
  instanceType: string | null;
  vcpus: number | null;
  memoryGib: number | null;
  tikvVersion: string | null;
  volumeIds: string[];
}

export interface InventoryVolume {
  id: string;
  type: string;
  sizeGib: number | null;
  iops: number | null;
  throughputMibps: number | null;
  role: string | null;
}

// The snapshot is documented by docs/snapshot.schema.json but typed as a bare object in the OpenAPI schema,
// so read only the inventory fields, defensively.
function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}
function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

/** Read the nodes and volumes out of a snapshot document (docs/snapshot.schema.json). */
export function inventoryFromSnapshot(snapshot: unknown): Inventory {
  const doc = record(snapshot);
  const nodes = list(doc.nodes).map((raw): InventoryNode => {
    const n = record(raw);
    const ids = [...list(n.data_volume_ids), ...list(n.raft_volume_ids)].filter(
      (id): id is string => typeof id === 'string',
    );
    return {
      address: str(n.address) ?? str(n.id) ?? '',
      instanceId: str(n.instance_id),
      instanceType: str(n.instance_type),
      vcpus: num(n.vcpus),
      memoryGib: num(n.memory_gib),
      tikvVersion: str(n.tikv_version),
      volumeIds: [...new Set(ids)],
    };
  });
  const volumes = list(doc.volumes).map((raw): InventoryVolume => {
    const v = record(raw);
    return {
      id: str(v.id) ?? '',
      type: str(v.type) ?? 'unknown',
      sizeGib: num(v.size_gib),
      iops: num(v.iops),
      throughputMibps: num(v.throughput_mibps),
      role: str(v.role),
    };
  });
  return { nodes, volumes };
}

// The snapshot's step must be 60 s or a multiple (the API's step_seconds); one 5-minute step over the last
// 5 minutes keeps the download to one point per series: we only want the inventory that comes with it.
const INVENTORY_WINDOW_MS = 5 * 60_000;

export function useInventory(clusterId: string) {
  return useQuery({
    queryKey: ['clusters', clusterId, 'inventory'],
    queryFn: async () => {
      const end = Math.floor(Date.now() / 60_000) * 60_000;
      const start = new Date(end - INVENTORY_WINDOW_MS).toISOString();
      const snapshot = await unwrap(
        api.GET('/api/v1/clusters/{cluster_id}/snapshot', {
          params: {
            path: { cluster_id: clusterId },
            query: { start, end: new Date(end).toISOString(), step_seconds: INVENTORY_WINDOW_MS / 1000 },
          },
        }),
      );
      return inventoryFromSnapshot(snapshot);
    },
  });
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

export function useSourceBadges(clusterId: string, isDemo: boolean) {
  return useQuery({
    queryKey: ['clusters', clusterId, 'sources', isDemo],
    queryFn: async () => {
      const [aws, prometheus] = await Promise.all([
        unwrap(api.GET('/api/v1/sources/aws')),
        unwrap(api.GET('/api/v1/sources/prometheus')),
      ]);
      return sourceBadges(clusterId, aws, prometheus, isDemo);
    },
  });
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
