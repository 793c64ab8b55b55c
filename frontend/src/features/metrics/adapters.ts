import type { Ceiling, ForecastBand, TimeSeries, TimeSeriesPoint } from '@/components/TimeSeriesChart';
import { formatDate, formatDuration, formatValue } from '@/lib/format';
import { methodWords } from '@/lib/forecast-method';
import type { BurstForecast, MetricCeiling, MetricSeries, Panel, PanelProjection, Utilisation } from './api';

/** What one chart needs, reshaped from a panel of the metrics API (the chart itself is generic). */
export interface ChartModel {
  id: string;
  title: string;
  unit: string;
  series: TimeSeries[];
  ceilings: Ceiling[];
  forecast?: ForecastBand;
  description?: string;
  notes: string[];
}

/** The API's "Ceiling in force" line of an IOPS / MiB/s panel (metrics service: the advisor's in-force rule). */
export const IN_FORCE_SUFFIX = '_ceiling_in_force';
const IN_FORCE_COLOR = '#cf222e';

/** A series' own points in epoch ms (null stays null: a gap, never 0); the chart breaks the line at its gaps. */
export function toPoints(series: MetricSeries): TimeSeriesPoint[] {
  return series.t.map((t, i) => ({ t: t * 1000, value: series.values[i] ?? null }));
}

/**
 * Milliseconds one point of a series stands for: its own step (the API's `step_seconds`: the chart's resolution,
 * a longer CloudWatch period, or the M4 span when the server cut the series to the chart's width), never less
 * than the chart's resolution. Two points further apart have no data between them.
 */
export function stepMs(series: MetricSeries, chartStepSeconds: number): number {
  return Math.max(chartStepSeconds, series.step_seconds ?? chartStepSeconds) * 1000;
}

/**
 * The share of the window the forecasts run past its end on the chart: every chart of the page has the same
 * time axis, the chosen window and then this much more (24 hours of data, 12 hours of forecast). A Headroom
 * display choice: the window stays the larger part; where a forecast goes on, its note says where it ends up.
 */
export const FORECAST_SHARE = 0.5;

/** The time axis of every chart of the page, in epoch ms: the window, plus the forecast horizon when forecasts are drawn. */
export function chartDomain(start: string, end: string, withForecasts: boolean): [number, number] {
  const lo = Date.parse(start);
  const hi = Date.parse(end);
  return [lo, withForecasts ? hi + FORECAST_SHARE * (hi - lo) : hi];
}

const STATISTIC_WORDS = { avg: 'averages', max: 'maxima', min: 'minima' } as const;

/** What a chart's points are: "1-minute points", "5-minute minima", and when cut to the chart's width, that each
 * point is the peak or dip of a span of them (the server keeps each span's first, lowest, highest and last point). */
export function describePoints(panel: Panel, stepSeconds: number): string {
  const statistic = panel.series[0]?.statistic ?? 'avg';
  const base =
    stepSeconds <= 60
      ? '1-minute points'
      : `${stepSeconds === 300 ? '5-minute' : 'hourly'} ${STATISTIC_WORDS[statistic]}`;
  const span = Math.max(0, ...panel.series.map((s) => s.span_seconds ?? 0));
  if (span <= 0) return base;
  const data = stepSeconds <= 60 ? '1-minute data' : base;
  return `each point is the peak or dip of ${formatDuration(span)} of ${data}`;
}

function endOf(segments: MetricCeiling[]): number {
  return Math.max(...segments.map((s) => Date.parse(s.valid_to)));
}

/**
 * Ceilings in force at the window's end become reference lines (with their source). A ceiling that changed inside
 * the window (an inventory change: gp2 → gp3, a resize) is also drawn as a stepped "limit history" line, so the
 * data before the change is read against the limit it had then.
 */
export function toCeilings(ceilings: MetricCeiling[]): { lines: Ceiling[]; history: TimeSeries[] } {
  const byId = new Map<string, MetricCeiling[]>();
  for (const c of ceilings) byId.set(c.id, [...(byId.get(c.id) ?? []), c]);
  const lines: Ceiling[] = [];
  const history: TimeSeries[] = [];
  const end = ceilings.length ? endOf(ceilings) : 0;
  for (const [id, segments] of byId) {
    const sorted = [...segments].sort((a, b) => Date.parse(a.valid_from) - Date.parse(b.valid_from));
    const current = sorted.find((s) => Date.parse(s.valid_to) === end);
    if (current) lines.push({ id, label: current.label, value: current.value, source: current.source });
    if (sorted.length > 1 || !current) {
      const points: TimeSeriesPoint[] = [];
      for (const s of sorted) {
        points.push({ t: Date.parse(s.valid_from), value: s.value });
        points.push({ t: Date.parse(s.valid_to) - 1, value: s.value });
      }
      history.push({ id: `limit:${id}`, label: `${sorted[0]?.label ?? id} (limit in force)`, points, color: '#cf222e' });
    }
  }
  return { lines, history };
}

/** "45 min", "3 h 20 min", "2 d 4 h". */
/** One line on what a burst forecast says: when the bucket empties (with its band) and what remains after. */
export function describeForecast(f: BurstForecast): string {
  const unit = f.unit === 'MiB/s' ? 'MiB/s' : 'IOPS';
  const demand = formatValue(f.demand, unit);
  if (f.seconds_to_empty === null || f.seconds_to_empty === undefined) {
    return `${f.label}: at ${f.balance_percent.toFixed(0)}% and not draining at the recent demand (${demand}).`;
  }
  const low = f.seconds_to_empty_low ?? f.seconds_to_empty;
  const high = f.seconds_to_empty_high ?? f.seconds_to_empty;
  const band = low !== high ? ` (between ${formatDuration(low)} and ${formatDuration(high)})` : '';
  const after =
    f.fallback_iops !== null && f.fallback_iops !== undefined
      ? `; then ${formatValue(f.fallback_iops, 'IOPS')}` +
        (f.fallback_mibps !== null && f.fallback_mibps !== undefined ? ` / ${formatValue(f.fallback_mibps, 'MiB/s')}` : '')
      : '';
  if (f.seconds_to_empty === 0) return `${f.label}: empty now, serving its baseline${after}.`;
  return `${f.label}: empties in ${formatDuration(f.seconds_to_empty)}${band} at ${demand}${after}.`;
}

function forecastBand(f: BurstForecast): ForecastBand {
  return {
    label: `${f.label}: band`,
    // a missing edge drops its point (a gap in the band), never 0
    points: f.path.t.flatMap((t, i) => {
      const lower = f.path.lower[i];
      const upper = f.path.upper[i];
      return lower === undefined || upper === undefined ? [] : [{ t: t * 1000, lower, upper }];
    }),
  };
}

function dayText(days: number): string {
  const whole = Math.max(0, Math.round(days));
  return whole === 0 ? 'within a day' : `in ${whole} day${whole === 1 ? '' : 's'}`;
}

/**
 * One line on a growth projection: when the forecast reaches the panel's ceiling (with its 90 % interval and the
 * date), or that it does not within the horizon; and what it was fitted on.
 */
export function describeProjection(p: PanelProjection, chartEndMs?: number): string {
  const ceiling = `the ${formatValue(p.ceiling, p.unit)} ceiling`;
  const fitted = `fitted ${formatDate(p.fitted_at)} on ${Math.round(p.history_hours / 24)} days of history (forecast: ${methodWords(p.method)})`;
  if (p.days === null || p.days === undefined) return `Projection: not at ${ceiling} within ${Math.round(p.horizon_days)} days; ${fitted}.`;
  if (p.days <= 0) return `Projection: at ${ceiling} already; ${fitted}.`;
  const low = p.days_low === null || p.days_low === undefined ? null : Math.round(p.days_low);
  const high = p.days_high === null || p.days_high === undefined ? `>${Math.round(p.horizon_days)}` : String(Math.round(p.days_high));
  const date = p.hits_at ? ` (around ${formatDate(p.hits_at)})` : '';
  // the chart stops at its horizon: say that the line goes on, and where it gets to
  const beyond =
    chartEndMs !== undefined && p.hits_at && Date.parse(p.hits_at) > chartEndMs ? ', past the end of the chart' : '';
  return `Projection: reaches ${ceiling} ${dayText(p.days)}${date}${beyond}${low === null ? '' : `, 90 % interval ${low}–${high} days`}; ${fitted}.`;
}

function projectionBand(p: PanelProjection): ForecastBand {
  return {
    label: 'Projection: 90 % band',
    points: p.t.flatMap((t, i) => {
      const lower = p.low[i];
      const upper = p.high[i];
      return lower === undefined || upper === undefined ? [] : [{ t: t * 1000, lower, upper }];
    }),
  };
}

export interface PanelChartOptions {
  /** Draw the burst forecasts and growth projections past the window (else only their notes say what they find). */
  forecasts?: boolean;
  /** Where the chart's time axis ends: a projection going on past it says so. */
  chartEndMs?: number;
}

/** Reshape one API panel into the generic chart's props. */
export function panelChart(
  panel: Panel,
  stepSeconds: number,
  { forecasts: drawForecasts = true, chartEndMs }: PanelChartOptions = {},
): ChartModel {
  // a panel that draws several entities (the data and Raft volumes, the instance) says which each line is of; a
  // panel of one entity (its title names it) keeps its short names
  const entities = new Set(panel.series.map((s) => s.entity_id));
  const named = (entityId: string, label: string) =>
    entities.size > 1 && !label.includes(entityId) ? `${label} (${entityId})` : label;
  const series: TimeSeries[] = panel.series.map((s) => ({
    id: s.id,
    label: named(s.entity_id, s.label),
    points: toPoints(s),
    stepMs: stepMs(s, stepSeconds),
    // the ceiling in force (burst while credits last, else the baseline): drawn in the ceilings' red
    ...(s.id.endsWith(IN_FORCE_SUFFIX) ? { color: IN_FORCE_COLOR } : {}),
  }));
  const { lines, history } = toCeilings(panel.ceilings);
  series.push(...history);
  const forecasts = [...panel.forecasts].sort(
    (a, b) => (a.seconds_to_empty ?? Infinity) - (b.seconds_to_empty ?? Infinity),
  );
  for (const f of drawForecasts ? forecasts : []) {
    // drawn as its balance's continuation (its colour, dashed): two volumes' forecasts never share one grey
    const follows = panel.series.some((s) => s.id === f.id) ? { follows: f.id } : { color: '#57606a' };
    series.push({
      id: `forecast:${f.id}`,
      label: `${named(f.entity_id, f.label)} (projected)`,
      points: f.path.t.map((t, i) => ({ t: t * 1000, value: f.path.percent[i] ?? null })),
      ...follows,
    });
  }
  const projection = panel.projection ?? undefined;
  if (projection) {
    series.push({
      id: 'projection',
      label: 'Projected (hourly mean)',
      points: projection.t.map((t, i) => ({ t: t * 1000, value: projection.point[i] ?? null })),
      color: '#8250df',
    });
  }
  const first = forecasts[0];
  return {
    id: panel.id,
    title: panel.title,
    unit: panel.unit,
    series,
    ceilings: lines,
    forecast: !drawForecasts ? undefined : first ? forecastBand(first) : projection ? projectionBand(projection) : undefined,
    description: describePoints(panel, stepSeconds),
    notes: [
      ...panel.notes,
      ...forecasts.map(describeForecast),
      ...(projection ? [describeProjection(projection, chartEndMs)] : []),
    ],
  };
}

/**
 * Severity of a utilisation cell for the heat map. 90%: the advisor's "at the ceiling" fraction
 * (domain/advisor/rules/_common.py AT_CEILING_FRACTION; docs/reference/ebs-volume-types.md#performance-consistency "at least 90% of their provisioned IOPS performance
 * 99% of the time"). 70%: a Headroom display choice, a warning band below it.
 */
export function heat(percent: number | null | undefined): 'none' | 'ok' | 'warning' | 'critical' {
  if (percent === null || percent === undefined) return 'none';
  if (percent >= 90) return 'critical';
  if (percent >= 70) return 'warning';
  return 'ok';
}

export const UTILISATION_COLUMNS: { metric: Utilisation['metric']; label: string }[] = [
  { metric: 'data_iops', label: 'Data IOPS' },
  { metric: 'data_throughput', label: 'Data MiB/s' },
  { metric: 'raft_iops', label: 'Raft IOPS' },
  { metric: 'raft_throughput', label: 'Raft MiB/s' },
  { metric: 'instance_iops', label: 'Instance IOPS' },
  { metric: 'instance_throughput', label: 'Instance MiB/s' },
];
