import { describe, expect, it } from 'vitest';
import { formatUsd } from '@/lib/format';
import type { Sweep } from './api';
import { estimateMonthlyCostUsd, monthlyCostUsd, sweepCostUsd } from './pricing';

function sweep(over: Partial<Sweep>): Sweep {
  return {
    id: 1,
    kind: 'incremental',
    region: 'us-east-1',
    started_at: '2026-11-20T10:00:00Z',
    finished_at: '2026-11-20T10:00:02Z',
    window_start_at: null,
    window_end_at: null,
    series: 0,
    api_calls: 1,
    planned_calls: 1,
    lower_bound_calls: 1,
    metrics_requested: 0,
    datapoints: 0,
    points_written: 0,
    dropped: 0,
    retries: 0,
    error: null,
    ...over,
  };
}

describe('CloudWatch cost (USD 0.01 per 1,000 metrics requested, docs/reference/cloudwatch.md#pricing)', () => {
  it.each([
    [1000, 0.01],
    [500, 0.005],
    [123_000, 1.23],
  ])('%i metrics requested cost %f USD', (metrics, usd) => {
    expect(sweepCostUsd(metrics)).toBeCloseTo(usd, 10);
  });

  it('runs a minute sweep 43,200 times a month', () => {
    // 1,000 metrics a minute: 0.01 USD x 60 x 24 x 30 = 432 USD.
    expect(monthlyCostUsd(1000)).toBeCloseTo(432, 6);
  });

  it('adds the latest successful incremental sweep of each region, ignoring backfills and failures', () => {
    const sweeps = [
      sweep({ id: 5, region: 'us-east-1', started_at: '2026-11-20T10:05:00Z', metrics_requested: 100 }),
      sweep({ id: 4, region: 'us-east-1', started_at: '2026-11-20T10:04:00Z', metrics_requested: 900 }),
      sweep({ id: 3, region: 'eu-west-1', started_at: '2026-11-20T10:05:00Z', metrics_requested: 50 }),
      sweep({ id: 2, region: 'eu-west-1', kind: 'backfill', metrics_requested: 100_000 }),
      sweep({ id: 6, region: 'eu-west-1', started_at: '2026-11-20T10:06:00Z', metrics_requested: 7_000, error: 'Throttling' }),
    ];
    // (100 + 50) metrics a minute -> 150 / 1000 x 0.01 x 43,200 = 64.8 USD.
    expect(estimateMonthlyCostUsd(sweeps)).toBeCloseTo(64.8, 6);
    expect(estimateMonthlyCostUsd([sweeps[3]!])).toBeNull();
  });

  it('shows sub-cent amounts instead of $0.00', () => {
    expect(formatUsd(0.00015)).toBe('$0.00015');
    expect(formatUsd(64.8)).toBe('$64.80');
  });
});
