import { useQuery } from '@tanstack/react-query';
import { api } from '@/api/client';
import { unwrap } from '@/api/errors';
import type { paths } from '@/api/schema';

export type ClusterList = paths['/api/v1/clusters']['get']['responses'][200]['content']['application/json'];
export type Cluster = ClusterList['items'][number];

export const clustersQueryKey = ['clusters', 'list'] as const;

export function useClusters() {
  return useQuery({
    queryKey: clustersQueryKey,
    queryFn: () => unwrap(api.GET('/api/v1/clusters')),
  });
}
