import { useQuery } from '@tanstack/react-query';
import { api } from '@/api/client';
import { unwrap } from '@/api/errors';
import type { paths } from '@/api/schema';
import { formatQuantity } from '@/lib/format';

export type ChangeLedger =
  paths['/api/v1/clusters/{cluster_id}/changes']['get']['responses'][200]['content']['application/json'];
export type ChangeEntry = ChangeLedger['items'][number];
export type MeasuredCell = NonNullable<ChangeEntry['effect']>['cells'][number];

export function useChanges(clusterId: string) {
  return useQuery({
    queryKey: ['clusters', clusterId, 'changes'],
    queryFn: () =>
      unwrap(api.GET('/api/v1/clusters/{cluster_id}/changes', { params: { path: { cluster_id: clusterId } } })),
  });
}

const METRIC_NAMES: Record<MeasuredCell['metric'], string> = {
  data_iops: 'data volume IOPS',
  data_throughput: 'data volume throughput',
  raft_iops: 'raft volume IOPS',
  raft_throughput: 'raft volume throughput',
  instance_iops: 'instance EBS IOPS',
  instance_throughput: 'instance EBS throughput',
};

export function metricName(metric: MeasuredCell['metric']): string {
  return METRIC_NAMES[metric];
}

/** "peak 97 % of the ceiling -> 48 %" in words; "no data" where a window had none. */
export function peakText(cell: MeasuredCell): string {
  const pct = (v: number | null | undefined) => (v === null || v === undefined ? 'no data' : formatQuantity(v, '%'));
  return `${pct(cell.before_peak_percent)} → ${pct(cell.after_peak_percent)}`;
}
