import { formatDateTime } from '@/lib/format';
import { memo, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { TimeSeriesChart } from '@/components/TimeSeriesChart';
import { chartDomain, panelChart, type ChartModel } from '../adapters';
import { chartPoints, RANGES, takeEarlyView, useMetricsOverview, useNodeMetrics, windowFor, type RangeId } from '../api';
import { OverviewTable } from './OverviewTable';
import '../metrics.css';

interface MetricsViewProps {
  clusterId: string;
  nodeId?: string;
  range: RangeId;
  onChange: (next: { nodeId?: string; range: RangeId }) => void;
  /** The clock, for tests; the window ends at this minute. */
  now?: () => number;
}

const RESOLUTION_TEXT: Record<number, string> = {
  60: 'raw 1-minute points',
  300: '5-minute rollups',
  3600: 'hourly rollups',
};

/** One panel: its chart and notes. Memoised: the overview's answer arriving, or a panel scrolled into view, leaves
 * the other panels as they are (their chart models are made once per answer). Every panel's box, title and legend
 * are laid out at once; its plot is drawn when scrolled near the viewport (the ones in view before the first
 * paint), so the first charts wait for nothing below the fold. */
const MetricsPanel = memo(function MetricsPanel({ chart, domain }: { chart: ChartModel; domain: [number, number] }) {
  return (
    <div className="metrics__panel">
      <TimeSeriesChart
        title={chart.title}
        unit={chart.unit}
        series={chart.series}
        ceilings={chart.ceilings}
        forecast={chart.forecast}
        description={chart.description}
        animate={false}
        emptyMessage="No data for this window."
        xDomain={domain}
        drawWhenNearView
      />
      {chart.notes.length > 0 && (
        <ul className="metrics__notes" aria-label={`${chart.title}: notes`}>
          {chart.notes.map((n) => (
            <li key={n}>{n}</li>
          ))}
        </ul>
      )}
    </div>
  );
});

/** The Metrics tab: node and range pickers, the per-node heat map, and the node's charts with their ceilings. */
export function MetricsView({ clusterId, nodeId, range, onChange, now = Date.now }: MetricsViewProps) {
  // A request already started for this view (prefetchMetricsView, while the page loaded) chose the points and the
  // window: the view asks the same, so its queries are the ones under way.
  const [early] = useState(() => takeEarlyView(clusterId, nodeId, range));
  // A new window only when the range changes.
  const [shown, setShown] = useState(() => ({ range, window: early?.window ?? windowFor(range, now()) }));
  let window = shown.window;
  if (shown.range !== range) {
    window = windowFor(range, now());
    setShown({ range, window });
  }
  const overview = useMetricsOverview(clusterId, window);
  // Forecasts (burst buckets) and growth projections run past the window: drawn on request, up to the charts'
  // forecast horizon (each note says when its ceiling is reached, beyond it too); their notes show either way.
  const [projections, setProjections] = useState(false);
  // The server cuts each line to the charts' width (M4, peaks kept): measured once, before the first request.
  const root = useRef<HTMLDivElement>(null);
  const [points, setPoints] = useState<number | undefined>(early?.points);
  useLayoutEffect(() => setPoints((early) => early ?? chartPoints(root.current?.clientWidth ?? 0)), []);
  const metrics = useNodeMetrics(clusterId, nodeId, window, projections, points);
  const nodes = overview.data?.nodes.map((n) => n.node) ?? (metrics.data?.node ? [metrics.data.node] : []);
  // The chosen node shows at once (the previous node's charts stay while the new ones load).
  const currentNode = nodeId ?? metrics.data?.node?.id;
  // One time axis for every chart of the page (so a row's charts line up): the window the API answered for, and
  // the forecast horizon after it when forecasts are shown.
  const domain = useMemo<[number, number]>(
    () => chartDomain(metrics.data?.start ?? window.start, metrics.data?.end ?? window.end, projections),
    [metrics.data, window, projections],
  );
  // The panels' chart models, once per answer (not at each step of drawing them).
  const charts = useMemo(
    () =>
      (metrics.data?.panels ?? []).map((panel) =>
        panelChart(panel, metrics.data?.resolution_seconds ?? 60, { forecasts: projections, chartEndMs: domain[1] }),
      ),
    [metrics.data, projections, domain],
  );

  return (
    <div className="metrics" ref={root}>
      <div className="toolbar metrics__toolbar">
        <label className="field metrics__node">
          <span className="field__label">Node</span>
          <select
            className="field__input"
            value={currentNode ?? ''}
            onChange={(e) => onChange({ nodeId: e.target.value, range })}
            disabled={nodes.length === 0}
          >
            {nodes.length === 0 && <option value="">No nodes</option>}
            {nodes.map((n) => (
              <option key={n.id} value={n.id}>
                {n.store_address}
                {n.instance_type ? ` (${n.instance_type})` : ''}
              </option>
            ))}
          </select>
        </label>
        <fieldset className="metrics__range">
          <legend className="field__label">Time range</legend>
          {RANGES.map((r) => (
            <label key={r.id} className={r.id === range ? 'segmented segmented--active' : 'segmented'}>
              <input
                type="radio"
                name="metrics-range"
                value={r.id}
                checked={r.id === range}
                onChange={() => onChange({ nodeId, range: r.id })}
              />
              {r.label}
            </label>
          ))}
        </fieldset>
        <a
          className="metrics__rules"
          href={`/api/v1/clusters/${clusterId}/alert-rules`}
          download
          title="Headroom's thresholds on this cluster's own limits, for your Prometheus and Alertmanager (promtool check rules)"
        >
          Download Prometheus alert rules
        </a>
        <label className="metrics__projections">
          <input type="checkbox" checked={projections} onChange={(e) => setProjections(e.target.checked)} /> Show
          projections and burst forecasts
        </label>
      </div>

      <section className="card metrics__overview" aria-labelledby="metrics-overview-heading">
        <h2 id="metrics-overview-heading">Nodes at a glance</h2>
        <p className="muted">
          Peak use of the ceiling in force at each point (a burst figure only while its credits last; 1-minute points up
          to 24 h, as the advisor judges), and how long the soonest-emptying burst
          bucket lasts at the recent demand.
        </p>
        {overview.isPending ? (
          <LoadingState label="Loading the overview…" />
        ) : overview.isError ? (
          <QueryError title="Could not load the overview" query={overview} />
        ) : overview.data.nodes.length === 0 ? (
          <p className="muted">No TiKV nodes yet.</p>
        ) : (
          <OverviewTable
            overview={overview.data}
            selectedNodeId={currentNode}
            onSelectNode={(id) => onChange({ nodeId: id, range })}
          />
        )}
      </section>

      {metrics.isPending ? (
        <LoadingState label="Loading metrics…" />
      ) : metrics.isError ? (
        <QueryError title="Could not load metrics" query={metrics} />
      ) : !metrics.data.node ? (
        <EmptyState title="No TiKV nodes yet">
          <p>
            Connect a Prometheus or AWS source (Settings → Data sources), or add nodes by hand; their charts appear here
            once data arrives.
          </p>
        </EmptyState>
      ) : (
        <section aria-labelledby="metrics-node-heading" aria-busy={metrics.isFetching}>
          <h2 id="metrics-node-heading">{metrics.data.node.store_address}</h2>
          <p className="muted">
            {formatDateTime(metrics.data.start)} – {formatDateTime(metrics.data.end)} ·{' '}
            {RESOLUTION_TEXT[metrics.data.resolution_seconds] ?? `${metrics.data.resolution_seconds}-second steps`}
          </p>
          <div className="metrics__grid">
            {charts.map((chart) => (
              <MetricsPanel key={chart.id} chart={chart} domain={domain} />
            ))}
          </div>
        </section>
      )}
    </div>
  );
}
