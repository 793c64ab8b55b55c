import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '@/api/client';
import { unwrap } from '@/api/errors';
import type { paths } from '@/api/schema';
import { formatDaysUntil } from '@/lib/format';
import { getProjectionDays } from './requests';

export type ProjectionList =
  paths['/api/v1/clusters/{cluster_id}/projections']['get']['responses'][200]['content']['application/json'];
export type Projection = ProjectionList['items'][number];

/** The cluster's projections as a list of days: without the forecast paths (bands=false), which the list does
 * not draw and which are most of the bytes (~700 KB for the demo cluster; the Metrics tab charts them). */
export function projectionsQuery(clusterId: string) {
  return queryOptions({
    queryKey: ['clusters', clusterId, 'projections', 'days'],
    queryFn: () =>
      unwrap(getProjectionDays(api, clusterId)),
  });
}

export function useProjections(clusterId: string) {
  return useQuery(projectionsQuery(clusterId));
}

const METRIC_NAMES: Record<Projection['metric'], string> = {
  iops: 'IOPS',
  mibps: 'throughput',
  used_gib: 'disk space',
};

const ENTITY_NAMES: Record<Projection['entity_kind'], string> = {
  volume: 'Volume',
  instance: 'Instance EBS',
  node: 'Store',
};

/** What a projection is about, in words: "Volume vol-0abc IOPS", "Store 10.0.1.5:20160 disk space". */
export function projectionTitle(p: Projection): string {
  return `${ENTITY_NAMES[p.entity_kind]} ${p.entity_id} ${METRIC_NAMES[p.metric]}`;
}

/** Days until the ceiling in words a person plans with: "reached", "in 12 days (9-16)", "not within 90 days". */
export function daysText(p: Projection): string {
  return formatDaysUntil(p, p.horizon_days);
}
