import { useQuery } from '@tanstack/react-query';
import { api } from '@/api/client';
import { unwrap } from '@/api/errors';
import type { paths } from '@/api/schema';
import { LoadingState } from '@/components/LoadingState';
import { TimeSeriesChart, type Ceiling, type TimeSeriesPoint } from '@/components/TimeSeriesChart';
import { metricName, type MeasuredCell } from '../api';

type NodeMetrics = paths['/api/v1/clusters/{cluster_id}/metrics']['get']['responses'][200]['content']['application/json'];
type Panel = NodeMetrics['panels'][number];

const WEEK_MS = 7 * 86_400_000;
// The series each IOPS / throughput panel measures its ceiling with (the metrics overview's, metrics/service.py).
const TOTAL: Record<MeasuredCell['metric'], string> = {
  data_iops: 'data_counted_iops',
  data_throughput: 'data_total_mibps',
  raft_iops: 'raft_counted_iops',
  raft_throughput: 'raft_total_mibps',
  instance_iops: 'instance_counted_iops',
  instance_throughput: 'instance_total_mibps',
};

function usePanel(clusterId: string, cell: MeasuredCell, start: string, end: string) {
  return useQuery({
    queryKey: ['changes', clusterId, 'panel', cell.node_id, cell.metric, start, end],
    queryFn: () =>
      unwrap(
        api.GET('/api/v1/clusters/{cluster_id}/metrics', {
          params: { path: { cluster_id: clusterId }, query: { node_id: cell.node_id, panel: [cell.metric], start, end } },
        }),
      ),
  });
}

/** A panel's total series as points, shifted by `shiftMs` (the week-earlier window drawn over the later one). */
export function shiftedPoints(panel: Panel | undefined, metric: MeasuredCell['metric'], shiftMs: number): TimeSeriesPoint[] {
  const series = panel?.series.find((s) => s.id === TOTAL[metric]);
  if (!series) return [];
  return series.t.map((t, i) => ({ t: t * 1000 + shiftMs, value: series.values[i] ?? null }));
}

/** Milliseconds one point of the panel's total series stands for (the API's step_seconds): a longer distance is a gap. */
function pointStepMs(panel: Panel | undefined, metric: MeasuredCell['metric']): number | undefined {
  const seconds = panel?.series.find((s) => s.id === TOTAL[metric])?.step_seconds;
  return seconds === undefined ? undefined : seconds * 1000;
}

function lastCeiling(panel: Panel | undefined, prefix: string): Ceiling | undefined {
  const c = panel?.ceilings.at(-1);
  return c ? { id: `${prefix}:${c.id}`, label: `${prefix}: ${c.label}`, value: c.value, source: c.source } : undefined;
}

/** Before and after a change on one chart: the after window, and the same hours a week earlier drawn over it. */
export function BeforeAfterChart({ clusterId, cell, before, after }: {
  clusterId: string;
  cell: MeasuredCell;
  before: { start: string; end: string };
  after: { start: string; end: string };
}) {
  const earlier = usePanel(clusterId, cell, before.start, before.end);
  const later = usePanel(clusterId, cell, after.start, after.end);
  if (earlier.isPending || later.isPending) return <LoadingState label="Loading the before and after…" />;
  const beforePanel = earlier.data?.panels[0];
  const afterPanel = later.data?.panels[0];
  const ceilings = [lastCeiling(afterPanel, 'after'), lastCeiling(beforePanel, 'before')].filter(
    (c): c is Ceiling => c !== undefined && c.value > 0,
  );
  const unique = ceilings.filter((c, i) => ceilings.findIndex((d) => d.value === c.value) === i);
  return (
    <TimeSeriesChart
      title={`${cell.node} ${metricName(cell.metric)}: after the change, and the same hours a week earlier`}
      unit={afterPanel?.unit ?? beforePanel?.unit ?? ''}
      series={[
        { id: 'after', label: 'After the change', points: shiftedPoints(afterPanel, cell.metric, 0), stepMs: pointStepMs(afterPanel, cell.metric) },
        {
          id: 'before',
          label: 'A week earlier (shifted one week)',
          points: shiftedPoints(beforePanel, cell.metric, WEEK_MS),
          stepMs: pointStepMs(beforePanel, cell.metric),
          color: '#8c959f',
        },
      ]}
      ceilings={unique}
      height={220}
      animate={false}
      emptyMessage="No data in these windows."
    />
  );
}
