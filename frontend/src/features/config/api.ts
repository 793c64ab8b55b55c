import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '@/api/client';
import { unwrap } from '@/api/errors';
import type { paths } from '@/api/schema';

export type NodeList = paths['/api/v1/clusters/{cluster_id}/nodes']['get']['responses'][200]['content']['application/json'];
export type ConfigNode = NodeList['items'][number];
export type NodeConfig = paths['/api/v1/clusters/{cluster_id}/nodes/{node_id}/config']['get']['responses'][200]['content']['application/json'];

export function useConfigNodes(clusterId: string) {
  return useQuery({
    // Same key as the clusters feature's node list, so the two share one cache entry.
    queryKey: ['clusters', clusterId, 'nodes'],
    queryFn: () =>
      unwrap(api.GET('/api/v1/clusters/{cluster_id}/nodes', { params: { path: { cluster_id: clusterId } } })),
  });
}

export function useNodeConfig(clusterId: string, nodeId: string | undefined) {
  return useQuery({
    queryKey: ['config', clusterId, nodeId],
    enabled: nodeId !== undefined,
    queryFn: () =>
      unwrap(
        api.GET('/api/v1/clusters/{cluster_id}/nodes/{node_id}/config', {
          params: { path: { cluster_id: clusterId, node_id: nodeId ?? '' } },
        }),
      ),
  });
}

export interface ConfigEntry {
  key: string;
  value: unknown;
}

/** Flatten TiKV's nested /config JSON into dotted keys ("storage.block-cache.capacity"), sorted. */
export function flattenConfig(config: Record<string, unknown>, prefix = ''): ConfigEntry[] {
  const out: ConfigEntry[] = [];
  for (const [name, value] of Object.entries(config)) {
    const key = prefix ? `${prefix}.${name}` : name;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      out.push(...flattenConfig(value as Record<string, unknown>, key));
    } else {
      out.push({ key, value });
    }
  }
  return out.sort((a, b) => a.key.localeCompare(b.key));
}

/** A tikv.toml change a selection of findings would make. */
export interface PendingChange {
  key: string;
  proposed: unknown;
  /** Store or status address of the node it applies to; null for every node. */
  entity: string | null;
  finding: string;
}

/** Whether a change applies to a node (by its store or status address, or to all nodes). */
export function appliesTo(change: PendingChange, node: Pick<ConfigNode, 'store_address' | 'status_address'>): boolean {
  return change.entity === null || change.entity === node.store_address || change.entity === node.status_address;
}

export type ConfigUpload = NonNullable<
  paths['/api/v1/clusters/{cluster_id}/nodes/{node_id}/config']['post']['requestBody']
>['content']['application/json'];

/** Upload a tikv.toml (or a TiUP topology) as the node's next config version. */
export function useUploadConfig(clusterId: string, nodeId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: ConfigUpload) =>
      unwrap(
        api.POST('/api/v1/clusters/{cluster_id}/nodes/{node_id}/config', {
          params: { path: { cluster_id: clusterId, node_id: nodeId } },
          body,
        }),
      ),
    onSuccess: (stored) => {
      queryClient.setQueryData(['config', clusterId, nodeId], stored);
    },
  });
}
