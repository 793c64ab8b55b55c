import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { formatValue } from '@/lib/format';
import { niceAxisMax } from './format';
// The chart itself, not the lazily loaded wrapper that index.ts exports (it renders at once, for getBy* queries).
import { TimeSeriesChart, toRows, type Ceiling, type ForecastBand, type TimeSeries } from './TimeSeriesChart';

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

describe('toRows', () => {
  it('merges series and forecast into one sorted row per timestamp', () => {
    const rows = toRows([readIops, writeIops], forecast);
    expect(rows.map((r) => r.t)).toEqual([T0, T0 + MIN, T0 + 2 * MIN, T0 + 3 * MIN, T0 + 4 * MIN]);
    expect(rows[0]).toEqual({ t: T0, 's:read': 1200, 's:write': 300 });
    // A missing sample stays null (a gap), it never becomes 0.
    expect(rows[2]).toEqual({ t: T0 + 2 * MIN, 's:read': null });
    expect(rows[4]).toEqual({ t: T0 + 4 * MIN, __forecast: [2400, 2900] });
  });
});

describe('TimeSeriesChart', () => {
  it('names the chart and lists series, forecast and ceilings with unit and source', () => {
    renderChart();
    const figure = screen.getByRole('figure', { name: 'Volume IOPS' });
    const legend = within(figure).getByRole('list', { name: 'Volume IOPS: legend' });
    const items = within(legend).getAllByRole('listitem').map((li) => li.textContent);
    expect(items).toEqual([
      'Read IOPS',
      'Write IOPS',
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
      const text = t.textContent ?? '';
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
