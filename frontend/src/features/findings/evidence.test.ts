import { describe, expect, it } from 'vitest';
import { describeForecast, describeNeeds, type Forecast } from './evidence';

const NONE = { label: null, at: null, earliest: null, latest: null, value: null, demand: null, balance_pct: null, source: null };

function forecast(fields: Partial<Forecast> & Pick<Forecast, 'kind' | 'within_seconds'>): Forecast {
  return { ...NONE, unit: 'IOPS', method: 'test', ...fields };
}

describe('describeForecast', () => {
  it('says when a bucket empties, that it is empty now, or that it is not draining', () => {
    expect(describeForecast(forecast({ kind: 'burst_empty', within_seconds: 0, value: 1050 }))).toBe(
      'Empty now: serving at most the 1,050 IOPS baseline.',
    );
    expect(describeForecast(forecast({ kind: 'burst_empty', within_seconds: null, demand: 498, balance_pct: 80 }))).toBe(
      'Not draining at 498 IOPS (balance 80% now).',
    );
    // no band edge at the low demand: the latest time is "never"
    expect(
      describeForecast(
        forecast({ kind: 'burst_empty', within_seconds: 3 * 3600 + 20 * 60, at: '2026-11-22T11:20:00Z', earliest: '2026-11-22T10:05:00Z' }),
      ),
    ).toBe('Empties in 3 h 20 min, at 11:20 UTC (between 10:05 and never).');
  });

  it('says a refill and a ceiling reached by growth', () => {
    expect(describeForecast(forecast({ kind: 'refill', within_seconds: 600 }))).toBe('Refills in 10 min.');
    expect(
      describeForecast(forecast({ kind: 'ceiling', within_seconds: 9 * 86400, label: 'sustained IOPS ceiling', value: 3000 })),
    ).toBe('sustained IOPS ceiling (3,000 IOPS): reached in about 9 d at the current growth.');
    expect(describeForecast(forecast({ kind: 'ceiling', within_seconds: null }))).toBe(
      'The ceiling: not reached within the forecast horizon.',
    );
  });
});

describe('describeNeeds', () => {
  it("says what one store of a cluster-level finding would need alone", () => {
    const node = {
      node: 'tikv-1',
      instance_type: 'm6i.2xlarge',
      severity: 'warning' as const,
      title: 'tikv-1: scheduler worker pool at 89% of its 4 threads',
      measures: [],
      share_of_window: 0.38,
      longest_run_minutes: 240,
      needs: { 'storage.scheduler-worker-pool-size': 6, 'storage.block-cache.capacity': '4GiB' },
    };
    expect(describeNeeds(node)).toBe('storage.scheduler-worker-pool-size = 6, storage.block-cache.capacity = 4GiB');
    expect(describeNeeds({ ...node, needs: {} })).toBe('—');
  });
});
