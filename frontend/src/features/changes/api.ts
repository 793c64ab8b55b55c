import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '@/api/client';
import { unwrap } from '@/api/errors';
import type { paths } from '@/api/schema';
import { formatQuantity } from '@/lib/format';
import { getChanges } from './requests';

export type ChangeLedger =
  paths['/api/v1/clusters/{cluster_id}/changes']['get']['responses'][200]['content']['application/json'];
export type ChangeEntry = ChangeLedger['items'][number];
export type MeasuredCell = NonNullable<ChangeEntry['effect']>['cells'][number];
export type FixOutcome = NonNullable<ChangeEntry['findings'][number]['outcome']>;
export type RuleList = paths['/api/v1/rules']['get']['responses'][200]['content']['application/json'];
export type RuleRecord = RuleList['items'][number];

export function changesQuery(clusterId: string) {
  return queryOptions({
    queryKey: ['clusters', clusterId, 'changes'],
    queryFn: () =>
      unwrap(getChanges(api, clusterId)),
  });
}

export function useChanges(clusterId: string) {
  return useQuery(changesQuery(clusterId));
}

/** Every advisor rule with how often its prediction held for the org's applied fixes. */
export function useRuleAccuracy() {
  return useQuery({
    queryKey: ['rules'],
    queryFn: () => unwrap(api.GET('/api/v1/rules', {})),
  });
}

export const VERDICT_NAMES: Record<FixOutcome['verdict'], string> = {
  held: 'Held',
  partly: 'Partly',
  missed: 'Missed',
  too_early: 'Too early',
  not_measurable: 'Not measurable',
};

/** "Predicted 97 % → 48.5 %, measured 97 % → 51 %", or null when nothing was measured. */
export function outcomeNumbers(o: FixOutcome): string | null {
  const pct = (v: number | null) => (v === null ? 'no data' : formatQuantity(v, '%'));
  if (o.predicted_after_percent === null || o.measured_after_percent === null) return null;
  return (
    `Predicted ${pct(o.predicted_before_percent)} → ${pct(o.predicted_after_percent)}, ` +
    `measured ${pct(o.measured_before_percent)} → ${pct(o.measured_after_percent)}`
  );
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
