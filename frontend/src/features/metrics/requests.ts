// The Metrics tab's first two requests and what they are made of (the window, the points a line asks for), with no
// React or query library in them: the app's queries (api.ts) and the page's first-requests script (src/boot.ts),
// which starts them before the app's code has arrived, build them here, so both ask for the same URLs.
import type { ApiClient } from '@/api/client';
import { addressParam } from '@/lib/addressParam';

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

// The page's content box (.page in styles/global.css): at most 72rem wide, 1.5rem of padding a side, 0.75rem on a
// screen up to 640 px wide.
const PAGE_MAX_PX = 72 * 16;
const PHONE_MAX_PX = 640;

/** The width of the page's content box in a viewport `viewportPx` wide, before the page has been drawn. */
export function contentWidthFor(viewportPx: number): number {
  const padding = viewportPx <= PHONE_MAX_PX ? 2 * 12 : 2 * 24;
  return Math.min(viewportPx, PAGE_MAX_PX) - padding;
}

/** A node's panels (GET /clusters/{id}/metrics); `nodeId` undefined asks for the cluster's first node. */
export function getNodeMetrics(client: ApiClient, clusterId: string, nodeId: string | undefined, window: Window,
  projections: boolean, points: number | undefined) {
  return client.GET('/api/v1/clusters/{cluster_id}/metrics', {
    params: {
      path: { cluster_id: clusterId },
      query: { node_id: nodeId, start: window.start, end: window.end, projections, points },
    },
  });
}

/** Every node's utilisation over the window (GET /clusters/{id}/metrics/overview). */
export function getOverview(client: ApiClient, clusterId: string, window: Window) {
  return client.GET('/api/v1/clusters/{cluster_id}/metrics/overview', {
    params: { path: { cluster_id: clusterId }, query: { start: window.start, end: window.end } },
  });
}

const METRICS_PATH = /^\/clusters\/([^/]+)\/metrics\/?$/;

/** What a Metrics tab's address opens on before the view is there to measure itself: its cluster, node and range,
 * the window ending at `nowMs` and the points its charts will ask for in a viewport `viewportPx` wide. */
export interface MetricsAddress {
  clusterId: string;
  nodeId: string | undefined;
  range: RangeId;
  window: Window;
  points: number;
}

/** The Metrics tab an address opens, or null for any other page. */
export function metricsAddress(address: { pathname: string; search: string }, viewportPx: number,
  nowMs: number): MetricsAddress | null {
  const clusterId = addressParam(METRICS_PATH, address.pathname);
  if (clusterId === null) return null;
  const params = new URLSearchParams(address.search);
  const range = rangeOf(params.get('range'));
  return { clusterId, nodeId: params.get('node') ?? undefined, range,
    window: windowFor(range, nowMs), points: chartPoints(contentWidthFor(viewportPx)) };
}
