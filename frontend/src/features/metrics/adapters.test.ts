import { describe, expect, it } from 'vitest';
import { seriesStyles } from '@/components/TimeSeriesChart/layout';
import { formatDuration } from '@/lib/format';
import { drawnLine, findGaps, segmentCount } from '@/components/TimeSeriesChart';
import { chartDomain, describeForecast, FORECAST_SHARE, heat, panelChart, stepMs, toCeilings, toPoints } from './adapters';
import { chartPoints, MAX_CHART_POINTS, windowFor } from './api';
import { nodeMetrics } from './fixtures';

const panels = nodeMetrics().panels;
const iops = panels[0]!;
const burst = panels[1]!;

describe('toPoints and stepMs', () => {
  it("keeps a series' own points in ms, a null as null (the chart breaks the line there, never at 0)", () => {
    const points = toPoints(iops.series[0]!);
    const t0 = iops.series[0]!.t[0]! * 1000;
    expect(points).toEqual([
      { t: t0, value: 2700 },
      { t: t0 + 60_000, value: 2800 },
      { t: t0 + 300_000, value: 3000 },
    ]);
    // 300 s between the second and third point: more than 1.5 steps of 60 s, a gap the chart draws as one
    const line = drawnLine(points, stepMs(iops.series[0]!, 60));
    expect(segmentCount(line.points)).toBe(2);
  });

  it("steps a 5-minute series on a 1-minute chart at its own 5 minutes, and an M4 cut series at its span", () => {
    const t0 = 1_800_000_000;
    const ec2 = { ...iops.series[0]!, t: [t0, t0 + 300, t0 + 600, t0 + 1200], values: [1, 2, 3, 4], step_seconds: 300 };
    expect(stepMs(ec2, 60)).toBe(300_000);
    expect(findGaps(toPoints(ec2), stepMs(ec2, 60))).toEqual([{ from: (t0 + 600) * 1000, to: (t0 + 1200) * 1000 }]);
    // 12-minute M4 spans: a span's first, lowest, highest and last points are up to 12 minutes apart
    const cut = { ...iops.series[0]!, t: [t0, t0 + 700, t0 + 720, t0 + 1440, t0 + 4000], values: [1, 9, 2, 3, 4], step_seconds: 720, span_seconds: 720 };
    expect(segmentCount(drawnLine(toPoints(cut), stepMs(cut, 60)).points)).toBe(2);
    // the chart's resolution is the least a step can be
    expect(stepMs({ ...ec2, step_seconds: 60 }, 300)).toBe(300_000);
  });
});

describe('the page time axis', () => {
  it('is the window, and with forecasts the window and half of it again (the same for every chart)', () => {
    const start = '2026-11-01T12:00:00Z';
    const end = '2026-11-02T12:00:00Z';
    expect(chartDomain(start, end, false)).toEqual([Date.parse(start), Date.parse(end)]);
    expect(chartDomain(start, end, true)).toEqual([Date.parse(start), Date.parse(end) + 12 * 3_600_000]);
    expect(FORECAST_SHARE).toBe(0.5);
  });

  it('names the volume or instance of each line when a panel draws several', () => {
    // each series says what it is of (the API's entity_id), whatever its id
    const raft = { ...burst.series[0]!, id: 'raft_burst_balance', label: 'Raft volume BurstBalance', entity_id: 'vol-raft' };
    const ec2 = { ...burst.series[0]!, id: 'ec2_ebs_io_balance', label: 'Instance EBSIOBalance%', entity_kind: 'instance' as const, entity_id: 'i-1' };
    const chart = panelChart({ ...burst, series: [...burst.series, raft, ec2] }, 60);
    expect(chart.series.slice(0, 3).map((s) => s.label)).toEqual([
      'Data volume BurstBalance (vol-0aaaa)',
      'Raft volume BurstBalance (vol-raft)',
      'Instance EBSIOBalance% (i-1)',
    ]);
    // the data volume's forecast continues its balance and is named alike
    expect(chart.series.find((s) => s.id === 'forecast:data_burst_balance')?.label).toMatch(/\(vol-0aaaa\) \(projected\)$/);
    // a panel of one entity (its title names it) keeps its short names
    expect(panelChart(iops, 60).series[0]!.label).toBe(iops.series[0]!.label);
  });

  it('draws no forecast past the window when forecasts are off; the notes still say what they find', () => {
    const chart = panelChart(burst, 60, { forecasts: false });
    expect(chart.series.map((s) => s.id)).toEqual(['data_burst_balance']);
    expect(chart.forecast).toBeUndefined();
    expect(chart.notes[0]).toMatch(/empties in 18 min/);
  });
});

describe('toCeilings', () => {
  it('draws the limit in force at the end and a history line when it changed in the window', () => {
    const { lines, history } = toCeilings(iops.ceilings);
    expect(lines).toEqual([
      { id: 'data_max_iops', label: 'gp3 provisioned IOPS', value: 6000, source: 'gp3 500 GiB: docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025' },
    ]);
    expect(history).toHaveLength(1);
    expect(history[0]!.points.map((p) => p.value)).toEqual([3000, 3000, 6000, 6000]);
    expect(history[0]!.points[0]!.t).toBe(Date.parse('2026-11-02T06:00:00Z'));
    expect(history[0]!.points[2]!.t).toBe(Date.parse('2026-11-02T09:00:00Z'));
  });

  it('draws no history for a ceiling that held all window', () => {
    const { lines, history } = toCeilings([iops.ceilings[1]!]);
    expect(lines.map((l) => l.value)).toEqual([6000]);
    expect(history).toEqual([]);
  });
});

describe('panelChart', () => {
  it('adds the forecast band, the projected path and a sentence with the band and the fallback', () => {
    const chart = panelChart(burst, 60);
    expect(chart.forecast?.points).toEqual([
      { t: burst.forecasts[0]!.path.t[0]! * 1000, lower: 48, upper: 48 },
      { t: burst.forecasts[0]!.path.t[1]! * 1000, lower: 10, upper: 30 },
    ]);
    expect(chart.series.map((s) => s.id)).toEqual(['data_burst_balance', 'forecast:data_burst_balance']);
    expect(chart.notes).toEqual([
      'Data volume BurstBalance forecast: empties in 18 min (between 15 min and 22 min) at 3,000 IOPS; then 1,050 IOPS / 128 MiB/s.',
    ]);
    expect(chart.unit).toBe('%');
    expect(chart.description).toBe('1-minute points');
  });

  it("draws each volume's forecast in its balance's colour, dashed, so two volumes' forecasts differ", () => {
    const raft = { ...burst.series[0]!, id: 'raft_burst_balance', label: 'Raft volume BurstBalance' };
    const raftForecast = { ...burst.forecasts[0]!, id: 'raft_burst_balance', label: 'Raft volume BurstBalance forecast' };
    const chart = panelChart({ ...burst, series: [...burst.series, raft], forecasts: [...burst.forecasts, raftForecast] }, 60);
    expect(chart.series.map((s) => [s.id, s.follows, s.color])).toEqual([
      ['data_burst_balance', undefined, undefined],
      ['raft_burst_balance', undefined, undefined],
      ['forecast:data_burst_balance', 'data_burst_balance', undefined],
      ['forecast:raft_burst_balance', 'raft_burst_balance', undefined],
    ]);
    const looks = seriesStyles(chart.series).map((s) => `${s.color}/${s.dash ?? ''}`);
    expect(new Set(looks).size).toBe(4);
  });

  it('draws the statistic the server chose (the lowest balance of a 5-minute bucket) and says so', () => {
    const chart = panelChart(burst, 300);
    expect(chart.series[0]!.points.map((p) => p.value)).toEqual([49, 47]);
    expect(chart.description).toBe('5-minute minima');
    expect(panelChart(iops, 3600).description).toBe('hourly averages');
  });

  it('says when the lines were cut to the chart width with their peaks kept', () => {
    const cut = { ...iops, series: [{ ...iops.series[0]!, step_seconds: 720, span_seconds: 720 }] };
    expect(panelChart(cut, 60).description).toBe('each point is the peak or dip of 12 min of 1-minute data');
  });
});

describe('describeForecast', () => {
  it('says when a bucket is empty or not draining', () => {
    const f = burst.forecasts[0]!;
    expect(describeForecast({ ...f, seconds_to_empty: 0, seconds_to_empty_low: 0, seconds_to_empty_high: 0 })).toBe(
      'Data volume BurstBalance forecast: empty now, serving its baseline; then 1,050 IOPS / 128 MiB/s.',
    );
    expect(describeForecast({ ...f, seconds_to_empty: null, demand: 500 })).toBe(
      'Data volume BurstBalance forecast: at 48% and not draining at the recent demand (500 IOPS).',
    );
  });
});

describe('helpers', () => {
  it('formats durations', () => {
    expect(formatDuration(59)).toBe('1 min');
    expect(formatDuration(3 * 3600 + 20 * 60)).toBe('3 h 20 min');
    expect(formatDuration(52 * 3600)).toBe('2 d 4 h');
  });

  it('bands the heat map at 70% and the advisor’s 90%', () => {
    expect([heat(null), heat(69.9), heat(70), heat(89.9), heat(90)]).toEqual(['none', 'ok', 'warning', 'warning', 'critical']);
  });

  it("asks for one point per 4 px of a panel's plot, within the page's byte budget", () => {
    // The chart's y axis (76 px, its ticks carry their unit) and margins (24 px) take 100 px of a panel.
    // A phone (358 px of grid): one column, 258 px of plot -> 65 points.
    expect(chartPoints(358)).toBe(65);
    // 1,104 px: two 544 px columns, 444 px of plot -> 111 points.
    expect(chartPoints(1104)).toBe(111);
    expect(chartPoints(500)).toBe(100); // one column, 400 px of plot
    expect(chartPoints(1000)).toBe(MAX_CHART_POINTS); // one 1,000 px column: 900 px of plot, capped
    expect(chartPoints(0)).toBe(16);
  });

  it('ends a window at the current minute', () => {
    const w = windowFor('24h', Date.parse('2026-11-02T12:00:42Z'));
    expect(w).toEqual({ start: '2026-11-01T12:00:00.000Z', end: '2026-11-02T12:00:00.000Z' });
  });
});

describe('a panel with a growth projection', () => {
  const t0 = Date.parse('2026-11-02T12:00:00Z') / 1000;
  const projection = {
    ceiling: 4000,
    ceiling_source: 'AWS: Amazon EBS volume types (https://docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html)',
    target: {
      id: 'data_max_iops',
      label: 'gp3 provisioned IOPS',
      value: 4000,
      unit: 'IOPS',
      kind: 'provisioned' as const,
      valid_from: null,
      valid_to: null,
      source: 'AWS: Amazon EBS volume types (https://docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html)',
    },
    unit: 'IOPS',
    method: 'ets-weekly',
    history_hours: 672,
    fitted_at: '2026-11-02T12:05:00Z',
    days: 12.3,
    days_low: 9.1,
    days_high: 16.6,
    hits_at: '2026-11-14T19:00:00Z',
    horizon_days: 90,
    t: [t0, t0 + 6 * 3600, t0 + 12 * 3600],
    point: [2000, 2100, 2200],
    low: [1800, 1850, 1900],
    high: [2200, 2350, 2500],
  };

  it('draws the projected path and its band, and says when it reaches the ceiling', () => {
    const chart = panelChart({ ...iops, projection }, 60);
    const line = chart.series.find((s) => s.id === 'projection');
    expect(line?.points).toEqual([
      { t: t0 * 1000, value: 2000 },
      { t: (t0 + 6 * 3600) * 1000, value: 2100 },
      { t: (t0 + 12 * 3600) * 1000, value: 2200 },
    ]);
    expect(chart.forecast?.points[2]).toEqual({ t: (t0 + 12 * 3600) * 1000, lower: 1900, upper: 2500 });
    expect(chart.notes.at(-1)).toBe(
      'Projection: reaches the 4,000 IOPS ceiling in 12 days (around 14 Nov 2026), 90 % interval 9–17 days; ' +
        'fitted 2 Nov 2026 on 28 days of history (forecast: weekly seasonal trend).',
    );
  });

  it('says when the ceiling is reached past the end of the chart', () => {
    const chart = panelChart({ ...iops, projection }, 60, { chartEndMs: Date.parse('2026-11-03T00:00:00Z') });
    expect(chart.notes.at(-1)).toContain('in 12 days (around 14 Nov 2026), past the end of the chart,');
  });

  it('says so when the ceiling is beyond the horizon, and draws nothing without a projection', () => {
    const chart = panelChart({ ...iops, projection: { ...projection, days: null, days_low: null, days_high: null } }, 60);
    expect(chart.notes.at(-1)).toMatch(/^Projection: not at the 4,000 IOPS ceiling within 90 days/);
    expect(panelChart({ ...iops, projection: null }, 60).series.some((s) => s.id === 'projection')).toBe(false);
  });
});
