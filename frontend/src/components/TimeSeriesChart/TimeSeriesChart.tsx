import { SourceText } from '@/components/SourceText';
import { useId, useMemo } from 'react';
import {
  Area,
  CartesianGrid,
  ComposedChart,
  Line,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
  type TooltipContentProps,
} from 'recharts';
import { formatValue, humanUnit, type Unit } from '@/lib/format';
import { formatTick, formatTime as defaultFormatTime } from './format';
import { axisMax, layoutCeilingLabels, seriesStyles, type LabelPlacement } from './layout';
import { drawnLine, timeTicks, valueAt, valueRange, type DrawnLine, type Gap, type Point } from './series';

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
}

const CEILING_COLOR = '#cf222e';
const FORECAST_COLOR = '#8c959f';

interface BandRow {
  t: number;
  band: [number, number] | null;
}

interface Drawn extends TimeSeries {
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

// The plot's margins (ComposedChart's margin) and the x axis's height (Recharts' default): the plot is the
// chart's height less these, which is what the ceiling labels are laid out in.
const MARGIN = { top: 20, right: 16, bottom: 4, left: 8 };
const X_AXIS_HEIGHT = 30;
/** The y axis's width: its ticks carry their unit ("1.5K IOPS", "120 MiB/s"). */
export const Y_AXIS_WIDTH = 76;

/** A series id as a CSS class name part. */
function cssId(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, '_');
}

function CeilingLabel({
  ceiling,
  unit,
  placement,
  viewBox,
}: {
  ceiling: Ceiling;
  unit: Unit;
  placement: LabelPlacement;
  viewBox?: unknown;
}) {
  const box = viewBox as { x?: number; y?: number; width?: number } | undefined;
  if (placement === 'legend') return null;
  if (box?.x === undefined || box.y === undefined || box.width === undefined) return null;
  const text = `${ceiling.label}: ${formatValue(ceiling.value, unit)}`;
  return (
    <text
      className="ts-chart__ceiling-label"
      data-placement={placement}
      x={box.x + box.width - 4}
      // above its line, or below it when another label holds the space above (layoutCeilingLabels)
      y={placement === 'above' ? box.y - 5 : box.y + 14}
      textAnchor="end"
      fill={ceiling.color ?? CEILING_COLOR}
      fontSize={12}
    >
      {/* Native hover tooltip: what the limit is and where the number comes from. */}
      <title>{`${text} (source: ${ceiling.source})`}</title>
      {text}
    </text>
  );
}

interface ChartTooltipProps extends TooltipContentProps<number | [number, number], string> {
  series: Drawn[];
  ceilings: Ceiling[];
  forecast?: ForecastBand;
  band: BandRow[];
  unit: Unit;
  formatTime: (epochMs: number) => string;
}

/** At the hovered time: each series' nearest point (each has its own timestamps), "no data" in one of its gaps. */
function ChartTooltip({ active, label, series, ceilings, forecast, band, unit, formatTime }: ChartTooltipProps) {
  const t = Number(label);
  if (!active || !Number.isFinite(t)) return null;
  const bandAt = band.reduce<BandRow | undefined>(
    (best, r) => (r.band && (!best || Math.abs(r.t - t) < Math.abs(best.t - t)) ? r : best),
    undefined,
  );
  return (
    <div className="ts-chart__tooltip">
      <p className="ts-chart__tooltip-time">{formatTime(t)} UTC</p>
      <ul>
        {series.map((s) => {
          const v = valueAt(s.line, t);
          if (v === undefined) return null;
          return (
            <li key={s.id}>
              {s.label}: <strong>{v === 'no data' ? 'no data' : formatValue(v, unit)}</strong>
            </li>
          );
        })}
        {forecast && bandAt?.band && (
          <li>
            {forecast.label}: <strong>{formatValue(bandAt.band[0], unit)}</strong> to{' '}
            <strong>{formatValue(bandAt.band[1], unit)}</strong>
          </li>
        )}
      </ul>
      {ceilings.length > 0 && (
        <ul className="ts-chart__tooltip-limits">
          {ceilings.map((c) => (
            <li key={c.id}>
              Limit, {c.label}: {formatValue(c.value, unit)} (source: {c.source})
            </li>
          ))}
        </ul>
      )}
    </div>
  );
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

/** The one time-series chart: a line per series (each on its own points, broken only where it has no data),
 * dashed ceilings with their source, a shaded forecast band, on a shared time domain. */
export function TimeSeriesChart({
  title,
  unit,
  series,
  ceilings = [],
  forecast,
  description,
  height = 280,
  width,
  animate = true,
  formatTime = defaultFormatTime,
  emptyMessage = 'No data for this period yet.',
  xDomain,
}: TimeSeriesChartProps) {
  const titleId = useId();
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
  const yTicks = [0, yMax / 4, yMax / 2, (3 * yMax) / 4, yMax];
  const forecastColor = forecast?.color ?? FORECAST_COLOR;
  const placements = layoutCeilingLabels(ceilings, yMax, height - MARGIN.top - MARGIN.bottom - X_AXIS_HEIGHT);

  const chart = (
    <ComposedChart margin={MARGIN} {...(width !== undefined ? { width, height } : {})}>
      <CartesianGrid stroke="#e6e9ef" vertical={false} />
      <XAxis
        dataKey="t"
        type="number"
        scale="time"
        domain={domain ?? ['dataMin', 'dataMax']}
        ticks={domain ? timeTicks(domain) : undefined}
        allowDataOverflow
        tickFormatter={(t: number) => formatTime(t)}
        height={X_AXIS_HEIGHT}
        tick={{ fontSize: 12, fill: '#57606a' }}
        minTickGap={32}
        // the time ticks' unit: every time Headroom shows is UTC (no tick sits at the right end, see timeTicks)
        label={{ value: 'UTC', position: 'insideBottomRight', offset: 0, fontSize: 11, fill: '#57606a' }}
      />
      <YAxis
        tickFormatter={(v: number) => formatTick(v, shownUnit)}
        tick={{ fontSize: 12, fill: '#57606a' }}
        width={Y_AXIS_WIDTH}
        domain={[0, yMax]}
        ticks={yTicks}
        // Five fixed ticks never crowd 280 px; interval 0 spares Recharts measuring each label (a forced layout).
        interval={0}
        allowDataOverflow={false}
      />
      <Tooltip
        content={(props) => (
          <ChartTooltip
            {...(props as TooltipContentProps<number | [number, number], string>)}
            series={drawn}
            ceilings={ceilings}
            forecast={forecast}
            band={band}
            unit={unit}
            formatTime={formatTime}
          />
        )}
      />
      {forecast && band.length > 0 && (
        <Area
          data={band}
          dataKey="band"
          name={forecast.label}
          stroke={forecastColor}
          strokeDasharray="4 3"
          fill={forecastColor}
          fillOpacity={0.2}
          isAnimationActive={animate}
        />
      )}
      {drawn.map((s) => (
        <Line
          key={s.id}
          data={s.line.points}
          dataKey="value"
          name={s.label}
          className={`ts-chart__line ts-chart__line--${cssId(s.id)}`}
          stroke={s.color}
          strokeDasharray={s.dash}
          strokeWidth={2}
          dot={false}
          isAnimationActive={animate}
          // linear: a monotone curve overshoots between M4's kept extremes and draws values never measured
          type="linear"
        />
      ))}
      {ceilings.map((c) => (
        <ReferenceLine
          key={c.id}
          y={c.value}
          stroke={c.color ?? CEILING_COLOR}
          strokeDasharray="6 4"
          strokeWidth={1.5}
          ifOverflow="extendDomain"
          label={<CeilingLabel ceiling={c} unit={unit} placement={placements.get(c.id) ?? 'above'} />}
        />
      ))}
    </ComposedChart>
  );

  const hasData = drawn.some((d) => d.line.points.some((p) => p.value !== null));
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
        >
          {width !== undefined ? (
            chart
          ) : (
            <ResponsiveContainer width="100%" height={height}>
              {chart}
            </ResponsiveContainer>
          )}
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
