// The chart's first paint: the same lines, axes, grid, limits and band as the Recharts chart (TimeSeriesChart.tsx),
// drawn as plain SVG from the same model and at the same coordinates, with no Recharts code. It loads with the page,
// so a chart's data is drawn the moment it arrives; the Recharts chart takes its place (adding the tooltip) once
// its chunk is in, in the same box. Recharts' geometry, repeated here: the plot is the chart less MARGIN, the
// y axis (Y_AXIS_WIDTH) and the time axis (X_AXIS_HEIGHT); an axis tick is a 6 px line with its label 2 px past
// it; a label's baseline is moved 0.355em (centred) on the y axis and 0.71em (hanging) on the time axis.
import { formatValue } from '@/lib/format';
import { formatTick, formatTime as defaultFormatTime } from './format';
import {
  CEILING_COLOR,
  ChartFrame,
  cssId,
  GRID_COLOR,
  MARGIN,
  plotHeight,
  plotWidth,
  TICK_COLOR,
  timeTickCount,
  useChartModel,
  X_AXIS_HEIGHT,
  Y_AXIS_WIDTH,
  type BandRow,
  type ChartModel,
  type TimeSeriesChartProps,
} from './frame';
import { timeTicks, type Point } from './series';

const AXIS_COLOR = '#666';
const TICK_SIZE = 6;
const TICK_MARGIN = 2;

/** Maps data to the plot's pixels, as Recharts' linear scales do: time across, 0..yMax up. */
export interface PlotScale {
  x: (t: number) => number;
  y: (value: number) => number;
}

export function plotScale(domain: readonly [number, number], yMax: number, width: number, height: number): PlotScale {
  const [lo, hi] = domain;
  const left = MARGIN.left + Y_AXIS_WIDTH;
  const across = plotWidth(width);
  const down = plotHeight(height);
  return {
    x: (t) => (hi === lo ? left + across / 2 : left + ((t - lo) / (hi - lo)) * across),
    y: (value) => MARGIN.top + down - (value / yMax) * down,
  };
}

/**
 * An SVG path of a drawn line: a move to its first point and a line to each next one, a new move after every
 * null (a gap: the line breaks there and never joins across missing data). Empty when nothing has a value.
 */
export function linePath(points: readonly Point[], scale: PlotScale): string {
  let d = '';
  let inside = false;
  for (const p of points) {
    if (p.value === null || !Number.isFinite(p.value)) {
      inside = false;
      continue;
    }
    d += `${inside ? 'L' : 'M'}${scale.x(p.t)},${scale.y(p.value)}`;
    inside = true;
  }
  return d;
}

/** The band's shaded area: each unbroken run of rows, along its upper edge and back along its lower edge. */
export function bandPath(rows: readonly BandRow[], scale: PlotScale): string {
  let d = '';
  let run: { t: number; band: [number, number] }[] = [];
  const close = () => {
    if (run.length > 0) {
      d += run.map((r, i) => `${i === 0 ? 'M' : 'L'}${scale.x(r.t)},${scale.y(r.band[1])}`).join('');
      d += [...run].reverse().map((r) => `L${scale.x(r.t)},${scale.y(r.band[0])}`).join('');
      d += 'Z';
    }
    run = [];
  };
  for (const r of rows) {
    if (r.band) run.push({ t: r.t, band: r.band });
    else close();
  }
  close();
  return d;
}

function PlainPlot({
  props,
  model,
  width,
}: {
  props: TimeSeriesChartProps;
  model: ChartModel;
  width: number;
}) {
  const { unit, ceilings = [], height = 280, formatTime = defaultFormatTime } = props;
  const { domain, drawn, band, shownUnit, yMax, yTicks, placements, forecastColor } = model;
  if (!domain) return null;
  const scale = plotScale(domain, yMax, width, height);
  const left = scale.x(domain[0]);
  const right = left + plotWidth(width);
  const bottom = MARGIN.top + plotHeight(height);
  const xTicks = timeTicks(domain, timeTickCount(plotWidth(width)));
  const bandD = bandPath(band, scale);
  return (
    // aria-hidden: the plot's box is the image, named by its description (ChartFrame), as with Recharts
    <svg className="ts-chart__plain" width={width} height={height} aria-hidden="true" data-plain-chart="">
      <g className="ts-chart__grid">
        {yTicks.map((v) => (
          <line key={v} x1={left} x2={right} y1={scale.y(v)} y2={scale.y(v)} stroke={GRID_COLOR} fill="none" />
        ))}
      </g>
      {bandD && (
        <path className="ts-chart__plain-band" d={bandD} fill={forecastColor} fillOpacity={0.2} stroke={forecastColor} strokeDasharray="4 3" />
      )}
      {drawn.map((s) => {
        const d = linePath(s.line.points, scale);
        // only a series with points is drawn: the path is the data's own line, never a placeholder
        return d ? (
          <g key={s.id} className={`ts-chart__line ts-chart__line--${cssId(s.id)}`}>
            <path
              className="ts-chart__plain-line"
              d={d}
              stroke={s.color}
              strokeDasharray={s.dash}
              strokeWidth={2}
              fill="none"
            />
          </g>
        ) : null;
      })}
      {ceilings.map((c) => {
        const y = scale.y(Math.min(c.value, yMax));
        const placement = placements.get(c.id) ?? 'above';
        const text = `${c.label}: ${formatValue(c.value, unit)}`;
        return (
          <g key={c.id} className="ts-chart__ceiling">
            <line x1={left} x2={right} y1={y} y2={y} stroke={c.color ?? CEILING_COLOR} strokeDasharray="6 4" strokeWidth={1.5} fill="none" />
            {placement !== 'legend' && (
              <text
                className="ts-chart__ceiling-label"
                data-placement={placement}
                x={right - 4}
                y={placement === 'above' ? y - 5 : y + 14}
                textAnchor="end"
                fill={c.color ?? CEILING_COLOR}
                fontSize={12}
              >
                <title>{`${text} (source: ${c.source})`}</title>
                {text}
              </text>
            )}
          </g>
        );
      })}
      {/* the axes over the lines, as Recharts layers them */}
      <g className="ts-chart__axis ts-chart__axis--time">
        <line x1={left} x2={right} y1={bottom} y2={bottom} stroke={AXIS_COLOR} fill="none" />
        {xTicks.map((t) => (
          <g key={t}>
            <line x1={scale.x(t)} x2={scale.x(t)} y1={bottom} y2={bottom + TICK_SIZE} stroke={AXIS_COLOR} fill="none" />
            <text x={scale.x(t)} y={bottom + TICK_SIZE + TICK_MARGIN} dy="0.71em" textAnchor="middle" fontSize={12} fill={TICK_COLOR}>
              {formatTime(t)}
            </text>
          </g>
        ))}
        <text x={right} y={bottom + X_AXIS_HEIGHT} textAnchor="end" fontSize={11} fill={TICK_COLOR}>
          UTC
        </text>
      </g>
      <g className="ts-chart__axis ts-chart__axis--value">
        <line x1={left} x2={left} y1={MARGIN.top} y2={bottom} stroke={AXIS_COLOR} fill="none" />
        {yTicks.map((v) => (
          <g key={v}>
            <line x1={left - TICK_SIZE} x2={left} y1={scale.y(v)} y2={scale.y(v)} stroke={AXIS_COLOR} fill="none" />
            <text x={left - TICK_SIZE - TICK_MARGIN} y={scale.y(v)} dy="0.355em" textAnchor="end" fontSize={12} fill={TICK_COLOR}>
              {formatTick(v, shownUnit)}
            </text>
          </g>
        ))}
      </g>
    </svg>
  );
}

/** The time-series chart drawn as plain SVG (no tooltip): the first paint of TimeSeriesChart, same box and look. */
export function PlainTimeSeriesChart(props: TimeSeriesChartProps) {
  const model = useChartModel(props);
  return <ChartFrame props={props} model={model} plot={(width) => <PlainPlot props={props} model={model} width={width} />} />;
}
