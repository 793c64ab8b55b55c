import { keepPreviousData, useQuery, type QueryClient } from '@tanstack/react-query';
import { api } from '@/api/client';
import { unwrap } from '@/api/errors';
import type { paths } from '@/api/schema';
import { getNodeMetrics, getOverview, metricsAddress, type RangeId, type Window } from './requests';

export {
  chartPoints,
  contentWidthFor,
  MAX_CHART_POINTS,
  RANGES,
  rangeOf,
  windowFor,
  type RangeId,
  type Window,
} from './requests';

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

export const metricsKey = (clusterId: string) => ['metrics', clusterId] as const;

function nodeMetricsQuery(clusterId: string, nodeId: string | undefined, window: Window, projections: boolean,
  points: number | undefined) {
  return {
    queryKey: [...metricsKey(clusterId), 'node', nodeId ?? 'first', window, projections, points] as const,
    queryFn: () => unwrap(getNodeMetrics(api, clusterId, nodeId, window, projections, points)),
  };
}

function overviewQuery(clusterId: string, window: Window) {
  return {
    queryKey: [...metricsKey(clusterId), 'overview', window] as const,
    queryFn: () => unwrap(getOverview(api, clusterId, window)),
  };
}

/** A node's panels; `points` (chartPoints) is needed first, so the query waits for the page to be measured. */
export function useNodeMetrics(
  clusterId: string,
  nodeId: string | undefined,
  window: Window,
  projections: boolean,
  points: number | undefined,
) {
  return useQuery({
    ...nodeMetricsQuery(clusterId, nodeId, window, projections, points),
    enabled: points !== undefined,
    placeholderData: keepPreviousData,
  });
}

export function useMetricsOverview(clusterId: string, window: Window) {
  return useQuery({ ...overviewQuery(clusterId, window), placeholderData: keepPreviousData });
}

/** What a view's first requests were started with before the view was there to measure itself
 * (prefetchMetricsView): the view asks with the same points and window, so its queries are the ones under way. */
export interface EarlyView {
  points: number;
  window: Window;
}

const earlyViews = new Map<string, EarlyView>();
const earlyKey = (clusterId: string, nodeId: string | undefined, range: RangeId) => `${clusterId}|${nodeId ?? ''}|${range}`;

/**
 * At the app's start, when the address opens a cluster's Metrics tab: start its two requests (the node's panels,
 * the overview) at once, beside the session's and the page's code, rather than once the cluster's page has been
 * drawn. The charts' points are chosen from the width the view will have (the page's content box in this viewport),
 * as the view itself would; the view takes them and the window (takeEarlyView), so its queries are these.
 */
export function prefetchMetricsForAddress(queryClient: QueryClient, address: { pathname: string; search: string },
  viewportPx: number, nowMs: number = Date.now()) {
  const view = metricsAddress(address, viewportPx, nowMs);
  if (view === null) return;
  earlyViews.set(earlyKey(view.clusterId, view.nodeId, view.range), { points: view.points, window: view.window });
  void queryClient.prefetchQuery(nodeMetricsQuery(view.clusterId, view.nodeId, view.window, false, view.points));
  void queryClient.prefetchQuery(overviewQuery(view.clusterId, view.window));
}

/** The points and window a prefetch chose for this view (once: a later visit measures again), if one ran. */
export function takeEarlyView(clusterId: string, nodeId: string | undefined, range: RangeId): EarlyView | undefined {
  const key = earlyKey(clusterId, nodeId, range);
  const early = earlyViews.get(key);
  earlyViews.delete(key);
  return early;
}
