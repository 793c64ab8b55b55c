import { keepPreviousData, useQuery, type QueryClient } from '@tanstack/react-query';
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

/**
 * The most points a line asks for. A node view's budget is 150 KB of API data (docs/metrics-downsampling.md): ~41 lines of (epoch second,
 * value) at up to ~25 bytes a point, plus the overview's ~17 KB, leave ~130 points a line; 112 keeps a margin
 * (docs/metrics-downsampling.md).
 */
export const MAX_CHART_POINTS = 112;
/** One point per 4 px of plot: M4 keeps up to 4 points a span, so a span is ~16 px of line. */
const PX_PER_POINT = 4;
const MIN_CHART_POINTS = 16; // the API's minimum (metrics.service.MIN_POINTS)
// The panel grid (metrics.css): columns of at least 34rem, 1rem apart; the chart's y axis (76 px) and margins
// (8 + 16 px, TimeSeriesChart) take the rest of a panel's width.
const PANEL_MIN_PX = 34 * 16;
const GAP_PX = 16;
const CHART_CHROME_PX = 76 + 8 + 16;

/** The points a line of the panel grid asks for, from the grid's width in CSS pixels. */
export function chartPoints(gridWidthPx: number): number {
  const columns = Math.max(1, Math.floor((gridWidthPx + GAP_PX) / (PANEL_MIN_PX + GAP_PX)));
  const plot = (gridWidthPx - GAP_PX * (columns - 1)) / columns - CHART_CHROME_PX;
  return Math.max(MIN_CHART_POINTS, Math.min(MAX_CHART_POINTS, Math.round(plot / PX_PER_POINT)));
}

/** The range named in the address (?range=…), 6 h when it names none. */
export function rangeOf(value: string | null): RangeId {
  return RANGES.find((r) => r.id === value)?.id ?? '6h';
}

function nodeMetricsQuery(clusterId: string, nodeId: string | undefined, window: Window, projections: boolean,
  points: number | undefined) {
  return {
    queryKey: [...metricsKey(clusterId), 'node', nodeId ?? 'first', window, projections, points] as const,
    queryFn: () =>
      unwrap(
        api.GET('/api/v1/clusters/{cluster_id}/metrics', {
          params: {
            path: { cluster_id: clusterId },
            query: { node_id: nodeId, start: window.start, end: window.end, projections, points },
          },
        }),
      ),
  };
}

function overviewQuery(clusterId: string, window: Window) {
  return {
    queryKey: [...metricsKey(clusterId), 'overview', window] as const,
    queryFn: () =>
      unwrap(
        api.GET('/api/v1/clusters/{cluster_id}/metrics/overview', {
          params: { path: { cluster_id: clusterId }, query: { start: window.start, end: window.end } },
        }),
      ),
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
 * Start the Metrics tab's two requests (the node's panels, the overview) while the page around it is still
 * loading (the session, the page's code, the cluster's own request), instead of after: `widthPx` is the width the
 * view will have (the page's content box), from which the charts' points are chosen as the view itself would.
 */
function prefetchMetricsView(queryClient: QueryClient, clusterId: string, nodeId: string | undefined,
  range: RangeId, widthPx: number, nowMs: number = Date.now()) {
  const window = windowFor(range, nowMs);
  const points = chartPoints(widthPx);
  earlyViews.set(earlyKey(clusterId, nodeId, range), { points, window });
  void queryClient.prefetchQuery(nodeMetricsQuery(clusterId, nodeId, window, false, points));
  void queryClient.prefetchQuery(overviewQuery(clusterId, window));
}

// The page's content box (.page in styles/global.css): at most 72rem wide, 1.5rem of padding a side, 0.75rem on a
// screen up to 640 px wide.
const PAGE_MAX_PX = 72 * 16;
const PHONE_MAX_PX = 640;

/** The width of the page's content box in a viewport `viewportPx` wide, before the page has been drawn. */
export function contentWidthFor(viewportPx: number): number {
  const padding = viewportPx <= PHONE_MAX_PX ? 2 * 12 : 2 * 24;
  return Math.min(viewportPx, PAGE_MAX_PX) - padding;
}

const METRICS_PATH = /^\/clusters\/([^/]+)\/metrics\/?$/;

/**
 * At the app's start, when the address opens a cluster's Metrics tab: start its requests at once, beside the
 * session's and the page's code, rather than once the cluster's page has been drawn.
 */
export function prefetchMetricsForAddress(queryClient: QueryClient, address: { pathname: string; search: string },
  viewportPx: number) {
  const match = METRICS_PATH.exec(address.pathname);
  if (!match?.[1]) return;
  const params = new URLSearchParams(address.search);
  prefetchMetricsView(queryClient, decodeURIComponent(match[1]), params.get('node') ?? undefined,
    rangeOf(params.get('range')), contentWidthFor(viewportPx));
}

/** The points and window a prefetch chose for this view (once: a later visit measures again), if one ran. */
export function takeEarlyView(clusterId: string, nodeId: string | undefined, range: RangeId): EarlyView | undefined {
  const key = earlyKey(clusterId, nodeId, range);
  const early = earlyViews.get(key);
  earlyViews.delete(key);
  return early;
}
