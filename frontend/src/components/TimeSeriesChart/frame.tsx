// What every drawing of a time-series chart shares, with no Recharts in it: the props, the model (domain, lines,
// band, y axis, ceiling labels), the figure (caption, plot box, legend) and the plot's geometry. The plain SVG
// first paint (PlainChart.tsx, loaded with the page) and the Recharts chart (TimeSeriesChart.tsx, in its own
// chunk) both draw from it, so the swap from one to the other keeps the box, the scales and the words.
import { SourceText } from '@/components/SourceText';
import { useId, useLayoutEffect, useMemo, useRef, useState, type ReactNode, type RefObject } from 'react';
import { formatValue, humanUnit, type Unit } from '@/lib/format';
import { formatTime as defaultFormatTime } from './format';
import { axisMax, layoutCeilingLabels, seriesStyles, type LabelPlacement } from './layout';
import { drawnLine, valueRange, type DrawnLine, type Gap, type Point } from './series';

export type TimeSeriesPoint = Point;

export interface TimeSeries {
  id: string;
  label: string;
  /** This series' own points (never merged with another series' timestamps); a null value is a gap, never 0. */
  points: TimeSeriesPoint[];
  /**
   * Milliseconds one point stands for (its bucket, CloudWatch period or M4 span): two points further apart than
   * GAP_STEPS of it have no data between them, and the line breaks there. Without it only null values break it.
   */
  stepMs?: number;
  color?: string;
  /** Id of the series this one continues (its forecast): drawn in that series' colour, dashed. */
  follows?: string;
}

/** A hard limit drawn as a horizontal line, e.g. a volume's provisioned IOPS. */
export interface Ceiling {
  id: string;
  /** What the limit is: "gp3 provisioned IOPS". */
  label: string;
  value: number;
  /** Where the number comes from: "AWS EBS volume types (gp3)" or "your volume's configuration". */
  source: string;
  color?: string;
}

export interface ForecastBandPoint {
  t: number;
  lower: number;
  upper: number;
}

export interface ForecastBand {
  label: string;
  points: ForecastBandPoint[];
  color?: string;
}

export interface TimeSeriesChartProps {
  title: string;
  /** Unit of every value on the y axis (series, ceilings and forecast alike). */
  unit: Unit;
  series: TimeSeries[];
  ceilings?: Ceiling[];
  forecast?: ForecastBand;
  description?: string;
  height?: number;
  /** A fixed width in pixels; by default the chart fills its container. */
  width?: number;
  animate?: boolean;
  formatTime?: (epochMs: number) => string;
  emptyMessage?: string;
  /**
   * The time axis, [start, end] in epoch ms: every chart of a page row passes the same one (the chosen window,
   * plus the forecast horizon when forecasts are drawn). Anything outside is cut at its edge. Default: the data's.
   */
  xDomain?: [number, number];
  /**
   * Draw the plot only once it is scrolled near the viewport (its box, caption and legend are there at once, at
   * their full height): for a page of many charts, most below the fold.
   */
  drawWhenNearView?: boolean;
}

export const CEILING_COLOR = '#cf222e';
export const FORECAST_COLOR = '#8c959f';
/** The grid's and the axes' colours (the grid lines, the tick labels). */
export const GRID_COLOR = '#e6e9ef';
export const TICK_COLOR = '#57606a';

// The plot's margins (ComposedChart's margin) and the x axis's height (Recharts' default): the plot is the
// chart's height less these, which is what the ceiling labels are laid out in.
export const MARGIN = { top: 20, right: 16, bottom: 4, left: 8 };
export const X_AXIS_HEIGHT = 30;
/** The y axis's width: its ticks carry their unit ("1.5K IOPS", "120 MiB/s"). */
export const Y_AXIS_WIDTH = 76;

export interface BandRow {
  t: number;
  band: [number, number] | null;
}

export interface Drawn extends TimeSeries {
  line: DrawnLine;
  color: string;
  dash?: string;
}

function highestValue(lines: DrawnLine[], ceilings: Ceiling[], band: BandRow[]): number {
  let max = 0;
  for (const l of lines) for (const p of l.points) if (p.value !== null && p.value > max) max = p.value;
  for (const c of ceilings) max = Math.max(max, c.value);
  for (const r of band) if (r.band) max = Math.max(max, r.band[1]);
  return max;
}

/** The forecast band's rows, cut to the domain like a line (its lower and upper edges each drawn as one). */
export function bandRows(forecast: ForecastBand | undefined, domain?: [number, number]): BandRow[] {
  if (!forecast) return [];
  const lower = drawnLine(forecast.points.map((p) => ({ t: p.t, value: p.lower })), undefined, domain).points;
  const upper = drawnLine(forecast.points.map((p) => ({ t: p.t, value: p.upper })), undefined, domain).points;
  return lower.map((p, i) => {
    const u = upper[i]?.value;
    return { t: p.t, band: p.value === null || u === null || u === undefined ? null : [p.value, u] };
  });
}

/** The data's own time range, [first, last] in epoch ms, when no domain is given. */
function dataDomain(series: TimeSeries[], forecast?: ForecastBand): [number, number] | undefined {
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of series) for (const p of s.points) if (p.value !== null) [lo, hi] = [Math.min(lo, p.t), Math.max(hi, p.t)];
  for (const p of forecast?.points ?? []) [lo, hi] = [Math.min(lo, p.t), Math.max(hi, p.t)];
  return lo <= hi ? [lo, hi] : undefined;
}

/** "no data 21:40–22:10 UTC" for a series' gaps (the first two, and how many more). */
export function describeGaps(gaps: Gap[], formatTime: (epochMs: number) => string): string {
  if (gaps.length === 0) return '';
  const shown = gaps.slice(0, 2).map((g) => `${formatTime(g.from)} – ${formatTime(g.to)}`);
  const more = gaps.length > 2 ? ` and ${gaps.length - 2} more` : '';
  return `no data ${shown.join(', ')}${more} (UTC)`;
}

/** A series id as a CSS class name part. */
export function cssId(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** What the chart draws, in words, for the figure's image role: the series, the limits with their values and the
 * forecast (the tooltips and the inline labels are not reachable without a pointer). */
export function describeChart(
  title: string,
  unit: Unit,
  series: TimeSeries[],
  ceilings: Ceiling[],
  forecast?: ForecastBand,
): string {
  const shown = axisUnit(unit);
  const parts = [`${title}${shown ? `, in ${shown}` : ''}: ${series.length === 1 ? 'line' : 'lines'} for ${series.map((s) => s.label).join(', ')}`];
  if (ceilings.length > 0) {
    const limits = ceilings.map((c) => `${c.label} at ${formatValue(c.value, unit)} (source: ${c.source})`);
    parts.push(`${ceilings.length === 1 ? 'limit' : 'limits'}: ${limits.join('; ')}`);
  }
  if (forecast) parts.push(`shaded: ${forecast.label}`);
  return `${parts.join('. ')}.`;
}

/** The unit the axis names: CloudWatch's "None" and "Count" name none, "Percent" reads "%". */
export function axisUnit(unit: Unit): string {
  const human = humanUnit(unit);
  return human.scale === 1 ? human.unit : unit;
}

/** Everything a drawing of the chart needs, computed once per props. */
export interface ChartModel {
  domain: [number, number] | undefined;
  drawn: Drawn[];
  band: BandRow[];
  shownUnit: string;
  yMax: number;
  yTicks: number[];
  placements: Map<string, LabelPlacement>;
  forecastColor: string;
  hasData: boolean;
}

/** The chart's model: its time domain, each series' drawn line and style, the band, the y axis and label places. */
export function useChartModel({ series, ceilings = [], forecast, height = 280, xDomain, unit }: TimeSeriesChartProps): ChartModel {
  const domain = useMemo(() => xDomain ?? dataDomain(series, forecast), [xDomain, series, forecast]);
  const drawn: Drawn[] = useMemo(() => {
    const styles = seriesStyles(series);
    return series.map((s, i) => ({ ...s, line: drawnLine(s.points, s.stepMs, domain), color: styles[i]!.color, dash: styles[i]!.dash }));
  }, [series, domain]);
  const band = useMemo(() => bandRows(forecast, domain), [forecast, domain]);
  const shownUnit = axisUnit(unit);
  const yMax = axisMax(
    highestValue(
      drawn.map((d) => d.line),
      ceilings,
      band,
    ),
    shownUnit === '%',
  );
  return {
    domain,
    drawn,
    band,
    shownUnit,
    yMax,
    yTicks: [0, yMax / 4, yMax / 2, (3 * yMax) / 4, yMax],
    placements: layoutCeilingLabels(ceilings, yMax, plotHeight(height)),
    forecastColor: forecast?.color ?? FORECAST_COLOR,
    hasData: drawn.some((d) => d.line.points.some((p) => p.value !== null)),
  };
}

/** The plot's height inside a chart `height` px tall (less the margins and the time axis). */
export function plotHeight(height: number): number {
  return height - MARGIN.top - MARGIN.bottom - X_AXIS_HEIGHT;
}

/** How far outside the viewport a deferred plot starts being drawn (a screen's worth of scrolling ahead). */
const NEAR_VIEW_PX = 400;

/**
 * The plot's box, its width and whether to draw it yet. The width is `fixed` when given, else the box's, read before
 * the first paint and again when the box resizes (both drawings take it from here). A `deferred` plot is drawn
 * only once its box is within NEAR_VIEW_PX of the viewport: one already there is drawn before the first paint
 * (measured with the width, in the same layout), one further down when scrolled near (an IntersectionObserver).
 * The box keeps its height meanwhile, so nothing moves when it is drawn. `shown`: the box is on the page (the chart
 * has data; without, it shows its empty message instead).
 */
function usePlotBox(fixed: number | undefined, deferred: boolean, shown: boolean): [RefObject<HTMLDivElement | null>, number, boolean] {
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  // without IntersectionObserver (an old browser, a test's DOM) every plot is drawn at once
  const [near, setNear] = useState(!deferred || typeof IntersectionObserver === 'undefined');
  useLayoutEffect(() => {
    const element = box.current;
    if (fixed !== undefined || !element) return;
    setWidth(element.clientWidth);
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver((entries) => {
      const entry = entries[entries.length - 1];
      if (entry) setWidth(Math.round(entry.contentRect.width));
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [fixed, shown]);
  useLayoutEffect(() => {
    const element = box.current;
    if (near || !element) return;
    const rect = element.getBoundingClientRect();
    if (rect.top < window.innerHeight + NEAR_VIEW_PX && rect.bottom > -NEAR_VIEW_PX) {
      setNear(true);
      return;
    }
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) {
          setNear(true);
          observer.disconnect();
        }
      },
      { rootMargin: `${NEAR_VIEW_PX}px 0px` },
    );
    observer.observe(element);
    return () => observer.disconnect();
  }, [near, shown]);
  return [box, fixed ?? width, near];
}

/** How many time ticks fit a plot `plotWidth` px wide: a label ("22 Nov, 05:10", 12 px) is ~85 px, plus a gap. */
export function timeTickCount(plotWidth: number): number {
  return Math.max(1, Math.min(4, Math.floor(plotWidth / 120)));
}

/** The plot's width inside a chart `width` px wide (less the margins and the y axis). */
export function plotWidth(width: number): number {
  return width - MARGIN.left - MARGIN.right - Y_AXIS_WIDTH;
}

/**
 * The chart's figure: caption, the plot's box (`plot`, drawn by the caller at the plot's width: the plain SVG or Recharts), legend.
 * Both drawings go through it, so the box and the words are the same before and after the swap.
 */
export function ChartFrame({
  props,
  model,
  plot,
}: {
  props: TimeSeriesChartProps;
  model: ChartModel;
  plot: (width: number) => ReactNode;
}) {
  const titleId = useId();
  const [box, measured, near] = usePlotBox(props.width, props.drawWhenNearView ?? false, model.hasData);
  const {
    title,
    unit,
    series,
    ceilings = [],
    forecast,
    description,
    height = 280,
    formatTime = defaultFormatTime,
    emptyMessage = 'No data for this period yet.',
  } = props;
  const { domain, drawn, forecastColor, hasData } = model;
  const end = domain?.[1];
  return (
    <figure className="ts-chart" aria-labelledby={titleId}>
      <figcaption className="ts-chart__caption">
        <span id={titleId} className="ts-chart__title">
          {title}
        </span>
        {description && <span className="ts-chart__description">{description}</span>}
      </figcaption>
      {hasData ? (
        <div
          className="ts-chart__plot"
          style={{ height }}
          role="img"
          aria-label={describeChart(title, unit, series, ceilings, forecast)}
          // the time axis drawn, [start, end] epoch ms: a page's charts share it (the e2e checks read it)
          data-x-domain={domain ? `${domain[0]},${domain[1]}` : undefined}
          ref={box}
        >
          {near && measured > 0 && plot(measured)}
        </div>
      ) : (
        <p className="ts-chart__empty" style={{ minHeight: height / 2 }}>
          {emptyMessage}
        </p>
      )}
      <ul className="ts-chart__legend" aria-label={`${title}: legend`}>
        {drawn.map((s) => {
          const range = valueRange(s.line.points);
          const gaps = describeGaps(s.line.gaps, formatTime);
          return (
            <li key={s.id} data-series-id={s.id}>
              <span
                className={s.dash ? 'ts-chart__swatch ts-chart__swatch--dashed' : 'ts-chart__swatch'}
                style={s.dash ? { borderColor: s.color } : { background: s.color }}
                aria-hidden="true"
              />
              <span>
                <span className="ts-chart__series-name">{s.label}</span>
                {range && (
                  <span className="ts-chart__range">
                    {' '}
                    ({range[0] === range[1] ? formatValue(range[0], unit) : `${formatValue(range[0], unit)} to ${formatValue(range[1], unit)}`})
                  </span>
                )}
                {gaps && <span className="ts-chart__gaps">; {gaps}</span>}
                {!range && !s.line.continuesPastEnd && <span className="ts-chart__gaps">: no data in this window</span>}
                {s.line.continuesPastEnd && end !== undefined && (
                  <span className="ts-chart__beyond">; continues past {formatTime(end)} UTC</span>
                )}
              </span>
            </li>
          );
        })}
        {forecast && (
          <li>
            <span className="ts-chart__swatch ts-chart__swatch--band" style={{ background: forecastColor }} aria-hidden="true" />
            {forecast.label}
          </li>
        )}
        {ceilings.map((c) => (
          <li key={c.id} title={`Source: ${c.source}`}>
            <span
              className="ts-chart__swatch ts-chart__swatch--ceiling"
              style={{ borderColor: c.color ?? CEILING_COLOR }}
              aria-hidden="true"
            />
            {c.label}: {formatValue(c.value, unit)}{' '}
            <span className="ts-chart__source">
              (source: <SourceText text={c.source} />)
            </span>
          </li>
        ))}
      </ul>
    </figure>
  );
}
