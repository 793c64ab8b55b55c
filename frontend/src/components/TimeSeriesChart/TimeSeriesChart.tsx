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

export interface TimeSeriesPoint {
  /** Milliseconds since the epoch. */
  t: number;
  /** null leaves a gap (no sample), unlike 0. */
  value: number | null;
}

export interface TimeSeries {
  id: string;
  label: string;
  points: TimeSeriesPoint[];
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
}

const CEILING_COLOR = '#cf222e';
const FORECAST_COLOR = '#8c959f';
const BAND_KEY = '__forecast';

type Row = { t: number; [key: string]: number | null | [number, number] };

function seriesKey(id: string): string {
  return `s:${id}`;
}

function highestValue(series: TimeSeries[], ceilings: Ceiling[], forecast?: ForecastBand): number {
  let max = 0;
  for (const s of series) for (const p of s.points) if (p.value !== null && p.value > max) max = p.value;
  for (const c of ceilings) max = Math.max(max, c.value);
  for (const p of forecast?.points ?? []) max = Math.max(max, p.upper);
  return max;
}

/** Merge every series and the forecast band into one row per timestamp, as Recharts wants. */
export function toRows(series: TimeSeries[], forecast?: ForecastBand): Row[] {
  const rows = new Map<number, Row>();
  const rowAt = (t: number): Row => {
    let row = rows.get(t);
    if (!row) {
      row = { t };
      rows.set(t, row);
    }
    return row;
  };
  for (const s of series) {
    for (const p of s.points) rowAt(p.t)[seriesKey(s.id)] = p.value;
  }
  for (const p of forecast?.points ?? []) rowAt(p.t)[BAND_KEY] = [p.lower, p.upper];
  return [...rows.values()].sort((a, b) => a.t - b.t);
}

// The plot's margins (ComposedChart's margin) and the x axis's height (Recharts' default): the plot is the
// chart's height less these, which is what the ceiling labels are laid out in.
const MARGIN = { top: 20, right: 16, bottom: 4, left: 8 };
const X_AXIS_HEIGHT = 30;

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
  series: TimeSeries[];
  ceilings: Ceiling[];
  forecast?: ForecastBand;
  unit: Unit;
  formatTime: (epochMs: number) => string;
}

function ChartTooltip({ active, payload, label, series, ceilings, forecast, unit, formatTime }: ChartTooltipProps) {
  if (!active || !payload?.length) return null;
  const row = payload[0]?.payload as Row | undefined;
  if (!row) return null;
  const band = row[BAND_KEY];
  return (
    <div className="ts-chart__tooltip">
      <p className="ts-chart__tooltip-time">{formatTime(Number(label))} UTC</p>
      <ul>
        {series.map((s) => {
          const v = row[seriesKey(s.id)];
          if (typeof v !== 'number') return null;
          return (
            <li key={s.id}>
              {s.label}: <strong>{formatValue(v, unit)}</strong>
            </li>
          );
        })}
        {forecast && Array.isArray(band) && (
          <li>
            {forecast.label}: <strong>{formatValue(band[0], unit)}</strong> to{' '}
            <strong>{formatValue(band[1], unit)}</strong>
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

/** The one time-series chart: lines per series, dashed ceilings with their source, a shaded forecast band. */
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
}: TimeSeriesChartProps) {
  const titleId = useId();
  const rows = useMemo(() => toRows(series, forecast), [series, forecast]);
  const shownUnit = axisUnit(unit);
  const yMax = axisMax(highestValue(series, ceilings, forecast), shownUnit === '%');
  const yTicks = [0, yMax / 4, yMax / 2, (3 * yMax) / 4, yMax];
  const styles = seriesStyles(series);
  const colored = series.map((s, i) => ({ ...s, color: styles[i]!.color, dash: styles[i]!.dash }));
  const forecastColor = forecast?.color ?? FORECAST_COLOR;
  const placements = layoutCeilingLabels(ceilings, yMax, height - MARGIN.top - MARGIN.bottom - X_AXIS_HEIGHT);

  const chart = (
    <ComposedChart
      data={rows}
      margin={MARGIN}
      {...(width !== undefined ? { width, height } : {})}
    >
      <CartesianGrid stroke="#e6e9ef" vertical={false} />
      <XAxis
        dataKey="t"
        type="number"
        scale="time"
        domain={['dataMin', 'dataMax']}
        tickFormatter={(t: number) => formatTime(t)}
        height={X_AXIS_HEIGHT}
        tick={{ fontSize: 12, fill: '#57606a' }}
        minTickGap={32}
      />
      <YAxis
        tickFormatter={formatTick}
        tick={{ fontSize: 12, fill: '#57606a' }}
        width={56}
        domain={[0, yMax]}
        ticks={yTicks}
        // Five fixed ticks never crowd 280 px; interval 0 spares Recharts measuring each label (a forced layout).
        interval={0}
        allowDataOverflow={false}
        label={{ value: shownUnit, angle: -90, position: 'insideLeft', fontSize: 12, fill: '#57606a' }}
      />
      <Tooltip
        content={(props) => (
          <ChartTooltip
            {...(props as TooltipContentProps<number | [number, number], string>)}
            series={colored}
            ceilings={ceilings}
            forecast={forecast}
            unit={unit}
            formatTime={formatTime}
          />
        )}
      />
      {forecast && (
        <Area
          dataKey={BAND_KEY}
          name={forecast.label}
          stroke={forecastColor}
          strokeDasharray="4 3"
          fill={forecastColor}
          fillOpacity={0.2}
          isAnimationActive={animate}
          connectNulls
        />
      )}
      {colored.map((s) => (
        <Line
          key={s.id}
          dataKey={seriesKey(s.id)}
          name={s.label}
          stroke={s.color}
          strokeDasharray={s.dash}
          strokeWidth={2}
          dot={false}
          isAnimationActive={animate}
          type="monotone"
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

  const hasData = rows.length > 0;

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
        {colored.map((s) => (
          <li key={s.id}>
            <span
              className={s.dash ? 'ts-chart__swatch ts-chart__swatch--dashed' : 'ts-chart__swatch'}
              style={s.dash ? { borderColor: s.color } : { background: s.color }}
              aria-hidden="true"
            />
            {s.label}
          </li>
        ))}
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
