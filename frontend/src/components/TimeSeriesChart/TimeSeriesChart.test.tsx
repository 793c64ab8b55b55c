import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { formatValue } from '@/lib/format';
import { formatTick } from './format';
import { axisMax, layoutCeilingLabels, niceAxisMax, PALETTE, seriesStyles } from './layout';
// The chart itself, not the lazily loaded wrapper that index.ts exports (it renders at once, for getBy* queries).
import { TimeSeriesChart, type Ceiling, type ForecastBand, type TimeSeries } from './TimeSeriesChart';

const T0 = Date.UTC(2026, 10, 1, 0, 0);
const MIN = 60_000;

const readIops: TimeSeries = {
  id: 'read',
  label: 'Read IOPS',
  points: [
    { t: T0, value: 1200 },
    { t: T0 + MIN, value: 1800 },
    { t: T0 + 2 * MIN, value: null },
    { t: T0 + 3 * MIN, value: 2400 },
  ],
};
const writeIops: TimeSeries = {
  id: 'write',
  label: 'Write IOPS',
  points: [
    { t: T0, value: 300 },
    { t: T0 + MIN, value: 350 },
  ],
};
// gp3 baseline: 3,000 IOPS included with every gp3 volume (AWS EBS volume types documentation).
const gp3Baseline: Ceiling = {
  id: 'gp3-iops',
  label: 'gp3 provisioned IOPS',
  value: 3000,
  source: 'AWS EBS volume types (gp3 baseline)',
};
const forecast: ForecastBand = {
  label: 'Forecast (80% interval)',
  points: [
    { t: T0 + 3 * MIN, lower: 2300, upper: 2500 },
    { t: T0 + 4 * MIN, lower: 2400, upper: 2900 },
  ],
};

function renderChart(props: Partial<Parameters<typeof TimeSeriesChart>[0]> = {}) {
  return render(
    <TimeSeriesChart
      title="Volume IOPS"
      unit="IOPS"
      series={[readIops, writeIops]}
      ceilings={[gp3Baseline]}
      forecast={forecast}
      width={640}
      height={300}
      animate={false}
      formatTime={(t) => `+${(t - T0) / MIN}m`}
      {...props}
    />,
  );
}

describe('formatValue', () => {
  it.each([
    [3000, 'IOPS', '3,000 IOPS'],
    [125, 'MiB/s', '125 MiB/s'],
    [42.5, '%', '42.5%'],
    [1.234, 'GiB', '1.23 GiB'],
    [16384, 'GiB', '16,384 GiB'],
    // never a negative zero: -0 and float noise below zero read 0
    [-0, 'IOPS', '0 IOPS'],
    [-1e-12, 'IOPS', '0 IOPS'],
    [-0.004, 'MiB/s', '0 MiB/s'],
    [-0.3, 'MiB/s', '-0.3 MiB/s'],
    [-0, '%', '0%'],
  ])('formats %s %s as %s', (value, unit, expected) => {
    expect(formatValue(value, unit)).toBe(expected);
  });
});

describe('niceAxisMax', () => {
  it.each([
    [3300, 4000],
    [3000, 4000],
    [2000, 2000],
    [101, 200],
    [0.7, 0.8],
    [0, 1],
  ])('rounds %s up to %s', (max, expected) => {
    expect(niceAxisMax(max)).toBeCloseTo(expected);
  });
});

describe('TimeSeriesChart: each series on its own points', () => {
  // Two series sampled at different times (each cut by M4 at its own timestamps): merged into one row per
  // timestamp, each line had a hole at every timestamp of the other.
  const a: TimeSeries = { id: 'a', label: 'Read', stepMs: 2 * MIN, points: [0, 2, 4, 6, 8].map((m) => ({ t: T0 + m * MIN, value: 100 + m })) };
  const b: TimeSeries = { id: 'b', label: 'Write', stepMs: 2 * MIN, points: [1, 3, 5, 7, 9].map((m) => ({ t: T0 + m * MIN, value: 50 + m })) };
  const pieces = (container: HTMLElement, id: string) =>
    (container.querySelector(`.ts-chart__line--${id} path.recharts-line-curve`)?.getAttribute('d')?.match(/M/g) ?? []).length;

  it('draws each line whole when the series interleave', () => {
    const { container } = renderChart({ series: [a, b], ceilings: [], forecast: undefined });
    expect(pieces(container, 'a')).toBe(1);
    expect(pieces(container, 'b')).toBe(1);
  });

  it("breaks a line only at its own gap, and says when there was no data", () => {
    const holed: TimeSeries = { ...a, points: a.points.filter((p) => p.t !== T0 + 4 * MIN) }; // 2 -> 6 min: 2 steps
    const { container } = renderChart({ series: [holed, b], ceilings: [], forecast: undefined });
    expect(pieces(container, 'a')).toBe(2);
    expect(pieces(container, 'b')).toBe(1);
    const legend = within(screen.getByRole('list', { name: 'Volume IOPS: legend' }));
    expect(legend.getByText(/^Read/).closest('li')?.textContent).toContain('no data +2m – +6m (UTC)');
    expect(legend.getByText(/^Write/).closest('li')?.textContent).not.toContain('no data');
  });

  it('keeps the time axis given (the window) and cuts a forecast at its end, saying it goes on', () => {
    const forecastLine: TimeSeries = {
      id: 'f',
      label: 'Projected',
      points: [
        { t: T0 + 8 * MIN, value: 108 },
        { t: T0 + 100 * MIN, value: 200 },
      ],
    };
    const { container } = renderChart({ series: [a, forecastLine], ceilings: [], forecast: undefined, xDomain: [T0, T0 + 12 * MIN] });
    expect(container.querySelector('[data-x-domain]')?.getAttribute('data-x-domain')).toBe(`${T0},${T0 + 12 * MIN}`);
    // the y axis is not stretched by the forecast's far end (200): 4 minutes in, it is at 112
    const ticks = [...container.querySelectorAll('.recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value')];
    expect(ticks.at(-1)?.textContent).toBe('200 IOPS');
    const legend = within(screen.getByRole('list', { name: 'Volume IOPS: legend' }));
    expect(legend.getByText(/^Projected/).closest('li')?.textContent).toContain('(108 IOPS to 112 IOPS); continues past +12m UTC');
  });

  it('puts the unit on every y tick', () => {
    const { container } = renderChart({ series: [a], ceilings: [], forecast: undefined, unit: 'ms' });
    const ticks = [...container.querySelectorAll('.recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value')];
    // values 100-108 ms, x 1.08 of headroom: a round 200 ms top
    expect(ticks.map((t) => t.textContent)).toEqual(['0 ms', '50 ms', '100 ms', '150 ms', '200 ms']);
  });

  it('says so when a series has no point in the window, instead of drawing it at 0', () => {
    const empty: TimeSeries = { id: 'r', label: 'Raft read', points: [{ t: T0, value: null }, { t: T0 + MIN, value: null }] };
    const { container } = renderChart({ series: [a, empty], ceilings: [], forecast: undefined });
    expect(container.querySelector('.ts-chart__line--r path.recharts-line-curve')).toBeNull();
    expect(screen.getByText(/^Raft read/).closest('li')?.textContent).toBe('Raft read: no data in this window');
  });
});

describe('TimeSeriesChart', () => {
  it('names the chart and lists series, forecast and ceilings with unit and source', () => {
    renderChart();
    const figure = screen.getByRole('figure', { name: 'Volume IOPS' });
    const legend = within(figure).getByRole('list', { name: 'Volume IOPS: legend' });
    const items = within(legend).getAllByRole('listitem').map((li) => li.textContent);
    expect(items).toEqual([
      // with the range each line spans, and where a series has no data
      'Read IOPS (1,200 IOPS to 2,400 IOPS); no data +1m – +3m (UTC)',
      'Write IOPS (300 IOPS to 350 IOPS)',
      'Forecast (80% interval)',
      'gp3 provisioned IOPS: 3,000 IOPS (source: AWS EBS volume types (gp3 baseline))',
    ]);
  });

  it('draws one line per series, the shaded band and a labelled ceiling line', () => {
    const { container } = renderChart();
    expect(container.querySelectorAll('.recharts-line')).toHaveLength(2);
    const band = container.querySelector('.recharts-area-area');
    expect(band).not.toBeNull();
    expect(band?.getAttribute('fill-opacity')).toBe('0.2');

    const refLine = container.querySelector('.recharts-reference-line line');
    expect(refLine).not.toBeNull();
    expect(refLine?.getAttribute('stroke-dasharray')).toBe('6 4');

    const label = container.querySelector('.ts-chart__ceiling-label');
    expect(label?.textContent).toContain('gp3 provisioned IOPS: 3,000 IOPS');
    // The hover title says where the limit comes from.
    expect(label?.querySelector('title')?.textContent).toBe(
      'gp3 provisioned IOPS: 3,000 IOPS (source: AWS EBS volume types (gp3 baseline))',
    );
  });

  it('keeps a ceiling above the data inside a round y axis', () => {
    // Data peaks at 2,400 IOPS; the 3,000 IOPS ceiling must still be inside the axis.
    const { container } = renderChart({ forecast: undefined });
    const ticks = [...container.querySelectorAll('.recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value')];
    const values = ticks.map((t) => {
      const text = (t.textContent ?? '').replace(/ IOPS$/, '');
      return text.endsWith('K') ? Number(text.slice(0, -1)) * 1000 : Number(text);
    });
    // 3,000 x 1.08 headroom rounds up to a 4,000 IOPS axis with round quarter ticks.
    expect(values).toEqual([0, 1000, 2000, 3000, 4000]);
  });

  it('shows an empty message instead of an empty plot', () => {
    const { container } = renderChart({ series: [{ ...readIops, points: [] }], forecast: undefined });
    expect(screen.getByText('No data for this period yet.')).toBeInTheDocument();
    expect(container.querySelector('.recharts-surface')).toBeNull();
    // Limits are still listed, so the reader knows what the chart will be measured against.
    expect(screen.getByText(/gp3 provisioned IOPS: 3,000 IOPS/)).toBeInTheDocument();
  });
});

describe('formatTick', () => {
  it.each([
    [-0, '', '0'],
    [-1e-9, 'IOPS', '0 IOPS'],
    [12_000, 'IOPS', '12K IOPS'],
    [40, '%', '40%'],
    [0.5, 'ms', '0.5 ms'],
  ])('formats %s %s as %s', (value, unit, expected) => {
    expect(formatTick(value, unit)).toBe(expected);
  });
});

describe('axisMax', () => {
  it.each([
    // a burst balance at 100 % draws on a 0-100 % axis (it ran to 200 %: 108 rounded up)
    [100, true, 100],
    [60, true, 80],
    // a share above a whole keeps its room
    [130, true, 200],
    [100, false, 200],
    [3000, false, 4000],
  ])('tops %s (percent: %s) at %s', (highest, percent, expected) => {
    expect(axisMax(highest, percent)).toBe(expected);
  });
});

describe('seriesStyles', () => {
  const pools = ['scheduler', 'apply', 'raftstore', 'store_writer', 'unified_read_pool', 'grpc', 'rocksdb'];

  it('gives every thread pool of the CPU chart its own colour (scheduler and rocksdb were the same blue)', () => {
    const styles = seriesStyles(pools.map((id) => ({ id })));
    expect(new Set(styles.map((s) => s.color)).size).toBe(pools.length);
    expect(styles.every((s) => s.dash === undefined)).toBe(true);
  });

  it('dashes the second pass through the palette, so a ninth series still differs from the first', () => {
    const styles = seriesStyles(Array.from({ length: PALETTE.length + 1 }, (_, i) => ({ id: `s${i}` })));
    const looks = styles.map((s) => `${s.color}/${s.dash ?? ''}`);
    expect(new Set(looks).size).toBe(PALETTE.length + 1);
    expect(styles[PALETTE.length]).toEqual({ color: PALETTE[0], dash: '6 3' });
  });

  it('keeps a given colour, skips it in the palette count, and draws a forecast dashed in its series colour', () => {
    const styles = seriesStyles([
      { id: 'data' },
      { id: 'limit', color: '#cf222e' },
      { id: 'raft' },
      { id: 'forecast:data', follows: 'data' },
      { id: 'forecast:raft', follows: 'raft' },
    ]);
    expect(styles).toEqual([
      { color: PALETTE[0] },
      { color: '#cf222e' },
      { color: PALETTE[1] },
      { color: PALETTE[0], dash: '6 3' },
      { color: PALETTE[1], dash: '6 3' },
    ]);
  });
});

describe('layoutCeilingLabels', () => {
  // The volume-throughput finding: a 125 MiB/s ceiling and its 90 % line (112.5) on a 0-200 axis, 166 px tall:
  // 10 px apart, where both labels above their lines overlapped ("ceiling 125" over "90 % of ceiling 113").
  it('puts the label of a line close under another below its line', () => {
    const placements = layoutCeilingLabels(
      [
        { id: 'ceiling', value: 125 },
        { id: '90%', value: 112.5 },
      ],
      200,
      166,
    );
    expect(Object.fromEntries(placements)).toEqual({ ceiling: 'above', '90%': 'below' });
  });

  it('keeps labels above lines far apart', () => {
    const placements = layoutCeilingLabels(
      [
        { id: 'baseline', value: 1050 },
        { id: 'burst', value: 3000 },
      ],
      4000,
      166,
    );
    expect(Object.fromEntries(placements)).toEqual({ baseline: 'above', burst: 'above' });
  });

  it('leaves a label to the legend when neither side of its line has room', () => {
    const placements = layoutCeilingLabels(
      [
        { id: 'a', value: 100 },
        { id: 'b', value: 98 },
        { id: 'c', value: 96 },
      ],
      200,
      166,
    );
    // b: a's label holds the space above, c's line runs through the space below; c's label fits under c
    expect(Object.fromEntries(placements)).toEqual({ a: 'above', b: 'legend', c: 'below' });
  });

  it('never places two labels within a text line of each other, whatever the lines', () => {
    const ceilings = [125, 120, 112.5, 100, 60, 58, 10].map((value, i) => ({ id: String(i), value }));
    const plot = 166;
    const placements = layoutCeilingLabels(ceilings, 200, plot);
    const baselines = ceilings
      .filter((c) => placements.get(c.id) !== 'legend')
      .map((c) => plot * (1 - c.value / 200) + (placements.get(c.id) === 'above' ? -5 : 14))
      .sort((a, b) => a - b);
    for (let i = 1; i < baselines.length; i++) expect(baselines[i]! - baselines[i - 1]!).toBeGreaterThanOrEqual(13);
  });
});

describe('TimeSeriesChart: units, labels, colours and its accessible name', () => {
  const at = (v: number) => [
    { t: T0, value: v },
    { t: T0 + MIN, value: v },
  ];

  it('names CloudWatch units as a reader does: no "None" on the ticks, "%" for Percent', () => {
    const tickTexts = (c: HTMLElement) =>
      [...c.querySelectorAll('.recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value')].map((t) => t.textContent);
    const { container, unmount } = renderChart({ unit: 'None', ceilings: [], forecast: undefined });
    expect(tickTexts(container).join(' ')).not.toContain('None');
    expect(screen.getByRole('img').getAttribute('aria-label')).not.toContain('None');
    unmount();
    const percent = renderChart({ unit: 'Percent', series: [{ id: 'b', label: 'BurstBalance', points: at(100) }], ceilings: [], forecast: undefined });
    expect(tickTexts(percent.container)).toEqual(['0%', '25%', '50%', '75%', '100%']);
  });

  it('draws a 0-100 % burst-balance axis, not 0-200 %', () => {
    const { container } = renderChart({
      unit: '%',
      series: [{ id: 'b', label: 'Data volume BurstBalance', points: at(100) }],
      ceilings: [{ id: 'low', label: 'low', value: 10, source: 'AWS CloudWatch metrics for EBS' }],
      forecast: undefined,
    });
    const ticks = [...container.querySelectorAll('.recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value')];
    expect(ticks.map((t) => t.textContent)).toEqual(['0%', '25%', '50%', '75%', '100%']);
  });

  it('draws the labels of close ceilings apart (one above, one below)', () => {
    const { container } = renderChart({
      unit: 'MiB/s',
      height: 220,
      series: [{ id: 'tp', label: 'throughput', points: at(118) }],
      ceilings: [
        { id: 'ceiling', label: 'current ceiling', value: 125, source: 'AWS EBS volume types' },
        { id: '90', label: '90% of ceiling', value: 112.5, source: 'AWS EBS volume types' },
      ],
      forecast: undefined,
    });
    const labels = [...container.querySelectorAll('.ts-chart__ceiling-label')];
    expect(labels.map((l) => l.getAttribute('data-placement'))).toEqual(['above', 'below']);
    const ys = labels.map((l) => Number(l.getAttribute('y')));
    expect(Math.abs(ys[0]! - ys[1]!)).toBeGreaterThanOrEqual(13);
  });

  it('strokes every series of one chart in its own colour', () => {
    const pools = ['scheduler', 'apply', 'raftstore', 'store_writer', 'unified_read_pool', 'grpc', 'rocksdb'];
    const { container } = renderChart({
      title: 'TiKV thread-pool CPU',
      unit: 'cores',
      series: pools.map((id, i) => ({ id, label: id, points: at(i + 1) })),
      ceilings: [],
      forecast: undefined,
    });
    const strokes = [...container.querySelectorAll('.recharts-line-curve')].map((p) => p.getAttribute('stroke'));
    expect(strokes).toHaveLength(pools.length);
    expect(new Set(strokes).size).toBe(pools.length);
  });

  it('has an image role named after what is drawn and the limit', () => {
    renderChart();
    expect(screen.getByRole('img', { name: /^Volume IOPS, in IOPS: lines for Read IOPS, Write IOPS\./ })).toBeInTheDocument();
    expect(screen.getByRole('img').getAttribute('aria-label')).toContain(
      'limit: gp3 provisioned IOPS at 3,000 IOPS (source: AWS EBS volume types (gp3 baseline))',
    );
  });
});
