import {
  Area,
  CartesianGrid,
  ComposedChart,
  Line,
  ReferenceLine,
  Tooltip,
  XAxis,
  YAxis,
  type TooltipContentProps,
} from 'recharts';
import { formatValue, type Unit } from '@/lib/format';
import { formatTick, formatTime as defaultFormatTime } from './format';
import {
  CEILING_COLOR,
  ChartFrame,
  cssId,
  GRID_COLOR,
  MARGIN,
  plotWidth,
  TICK_COLOR,
  timeTickCount,
  useChartModel,
  X_AXIS_HEIGHT,
  Y_AXIS_WIDTH,
  type BandRow,
  type Ceiling,
  type Drawn,
  type ForecastBand,
  type TimeSeriesChartProps,
} from './frame';
import { type LabelPlacement } from './layout';
import { timeTicks, valueAt } from './series';

export {
  axisUnit,
  bandRows,
  describeChart,
  describeGaps,
  Y_AXIS_WIDTH,
  type Ceiling,
  type ForecastBand,
  type ForecastBandPoint,
  type TimeSeries,
  type TimeSeriesChartProps,
  type TimeSeriesPoint,
} from './frame';

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

/** The one time-series chart: a line per series (each on its own points, broken only where it has no data),
 * dashed ceilings with their source, a shaded forecast band, on a shared time domain. Drawn by Recharts (tooltips);
 * PlainChart.tsx draws the same lines, axes and limits as its first paint while this chunk loads. */
export function TimeSeriesChart(props: TimeSeriesChartProps) {
  const { unit, ceilings = [], forecast, height = 280, animate = true, formatTime = defaultFormatTime } = props;
  const model = useChartModel(props);
  const { domain, drawn, band, shownUnit, yMax, yTicks, placements, forecastColor } = model;

  const chart = (width: number) => (
    <ComposedChart margin={MARGIN} width={width} height={height}>
      <CartesianGrid stroke={GRID_COLOR} vertical={false} />
      <XAxis
        dataKey="t"
        type="number"
        scale="time"
        domain={domain ?? ['dataMin', 'dataMax']}
        ticks={domain ? timeTicks(domain, timeTickCount(plotWidth(width))) : undefined}
        allowDataOverflow
        tickFormatter={(t: number) => formatTime(t)}
        height={X_AXIS_HEIGHT}
        tick={{ fontSize: 12, fill: TICK_COLOR }}
        // As many round-hour ticks as the width holds (timeTickCount): they never crowd, and interval 0 spares
        // Recharts measuring every label's width (a hidden span and a forced layout each) to thin them.
        interval={0}
        // the time ticks' unit: every time Headroom shows is UTC (no tick sits at the right end, see timeTicks)
        label={{ value: 'UTC', position: 'insideBottomRight', offset: 0, fontSize: 11, fill: TICK_COLOR }}
      />
      <YAxis
        tickFormatter={(v: number) => formatTick(v, shownUnit)}
        tick={{ fontSize: 12, fill: TICK_COLOR }}
        width={Y_AXIS_WIDTH}
        domain={[0, yMax]}
        ticks={yTicks}
        // Five fixed ticks never crowd 280 px; interval 0 spares Recharts measuring each label (a forced layout).
        interval={0}
        allowDataOverflow={false}
      />
      <Tooltip
        content={(tooltip) => (
          <ChartTooltip
            {...(tooltip as TooltipContentProps<number | [number, number], string>)}
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

  return <ChartFrame props={props} model={model} plot={chart} />;
}
