import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api } from '@/api/client';
import { unwrap } from '@/api/errors';
import type { paths } from '@/api/schema';

type MetricsOp = paths['/api/v1/clusters/{cluster_id}/metrics']['get'];
export type NodeMetrics = MetricsOp['responses'][200]['content']['application/json'];
export type Panel = NodeMetrics['panels'][number];
export type PanelId = Panel['id'];
export type MetricSeries = Panel['series'][number];
export type MetricCeiling = Panel['ceilings'][number];
export type BurstForecast = Panel['forecasts'][number];
export type PanelProjection = NonNullable<Panel['projection']>;
export type NodeBrief = NonNullable<NodeMetrics['node']>;
export type ClusterOverview =
  paths['/api/v1/clusters/{cluster_id}/metrics/overview']['get']['responses'][200]['content']['application/json'];
export type NodeOverview = ClusterOverview['nodes'][number];
export type Utilisation = NodeOverview['utilisation'][number];

/** The ranges the page offers; the API picks the resolution from the window (raw ≤ 6 h, 5 min ≤ 8 d, else 1 h). */
export const RANGES = [
  { id: '6h', label: '6 hours', seconds: 6 * 3600 },
  { id: '24h', label: '24 hours', seconds: 24 * 3600 },
  { id: '7d', label: '7 days', seconds: 7 * 86400 },
  { id: '30d', label: '30 days', seconds: 30 * 86400 },
] as const;
export type RangeId = (typeof RANGES)[number]['id'];

export interface Window {
  start: string;
  end: string;
}

/** The window of a range ending at `nowMs`, rounded down to the minute so query keys stay stable. */
export function windowFor(range: RangeId, nowMs: number): Window {
  const seconds = RANGES.find((r) => r.id === range)?.seconds ?? RANGES[0].seconds;
  const end = Math.floor(nowMs / 60_000) * 60_000;
  return { start: new Date(end - seconds * 1000).toISOString(), end: new Date(end).toISOString() };
}

export const metricsKey = (clusterId: string) => ['metrics', clusterId] as const;

export function useNodeMetrics(clusterId: string, nodeId: string | undefined, window: Window, projections = false) {
  return useQuery({
    queryKey: [...metricsKey(clusterId), 'node', nodeId ?? 'first', window, projections],
    queryFn: () =>
      unwrap(
        api.GET('/api/v1/clusters/{cluster_id}/metrics', {
          params: {
            path: { cluster_id: clusterId },
            query: { node_id: nodeId, start: window.start, end: window.end, projections },
          },
        }),
      ),
    placeholderData: keepPreviousData,
  });
}

export function useMetricsOverview(clusterId: string, window: Window) {
  return useQuery({
    queryKey: [...metricsKey(clusterId), 'overview', window],
    queryFn: () =>
      unwrap(
        api.GET('/api/v1/clusters/{cluster_id}/metrics/overview', {
          params: { path: { cluster_id: clusterId }, query: { start: window.start, end: window.end } },
        }),
      ),
    placeholderData: keepPreviousData,
  });
}
