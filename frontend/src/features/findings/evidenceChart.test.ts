import { describe, expect, it } from 'vitest';
import { GP2_EVIDENCE_SERIES } from '@/test/cluster-fixtures';
import type { Measure } from './evidence';
import { ceilingSource, chartTitle, toEvidenceCharts } from './evidenceChart';

const MEASURES: Measure[] = [
  { label: 'minimum BurstBalance', value: 0, unit: '%', statistic: 'min', limit: 10, limit_label: 'low-balance threshold', ceiling: null, source: 'docs/reference/cloudwatch.md#volume-metrics' },
  { label: 'demand p95', value: 1433.8, unit: 'IOPS', statistic: 'p95', limit: 1050, limit_label: 'gp2 baseline (3 IOPS/GiB)', ceiling: null, source: 'docs/reference/gp2-burst.md#the-credit-bucket' },
];

describe('chartTitle', () => {
  it.each([
    // the volume-throughput finding's chart was titled "MiB/s (MiB/s)"
    [['MiB/s'], 'MiB/s', 'MiB/s'],
    [['throughput'], 'MiB/s', 'throughput (MiB/s)'],
    [['counted IOPS vol-1', 'read IOPS vol-1'], 'IOPS', 'counted IOPS vol-1, read IOPS vol-1'],
    [['counted IOPS vol-1', 'queue vol-1'], 'IOPS', 'counted IOPS vol-1, queue vol-1 (IOPS)'],
    [['BurstBalance vol-1'], '%', 'BurstBalance vol-1 (%)'],
    [['share (%)'], '%', 'share (%)'],
    [['queue length'], '', 'queue length'],
    // a unit inside a word is not the unit
    [['MiB/sec'], 'MiB/s', 'MiB/sec (MiB/s)'],
  ])('titles %j in %s as %s', (names, unit, expected) => {
    expect(chartTitle(names, unit)).toBe(expected);
  });
});

describe('evidence charts', () => {
  it('makes one chart per unit with its ceilings, sources and gaps', () => {
    const { charts, missing } = toEvidenceCharts(GP2_EVIDENCE_SERIES, MEASURES, ['docs/reference/gp2-burst.md#the-credit-bucket', 'docs/reference/cloudwatch.md#volume-metrics'], 'gp2-burst-depletion');
    expect(charts.map((c) => [c.unit, c.title])).toEqual([
      ['%', 'BurstBalance vol-043ed06aaced3aa8a (%)'],
      // the series' name says its unit already: not "counted IOPS vol-… (IOPS)"
      ['IOPS', 'counted IOPS vol-043ed06aaced3aa8a'],
    ]);
    const [balance, iops] = charts;
    // epoch seconds become milliseconds; a null stays a gap, not a zero
    expect(iops!.series[0]!.points).toEqual([
      { t: Date.parse('2026-11-22T04:50:00Z'), value: 3000 },
      { t: Date.parse('2026-11-22T04:51:00Z'), value: null },
      { t: Date.parse('2026-11-22T04:52:00Z'), value: 1050 },
    ]);
    expect(balance!.ceilings).toEqual([{ id: '0:low', label: 'low', value: 10, source: 'docs/reference/cloudwatch.md#volume-metrics' }]);
    // the baseline is a measure's limit: its source; the burst ceiling is none: the finding's sources
    expect(iops!.ceilings.map((c) => [c.label, c.value, c.source])).toEqual([
      ["gp2 baseline (3 IOPS/GiB), the finding's limit", 1050, 'docs/reference/gp2-burst.md#the-credit-bucket'],
      ['gp2 burst, while credits last', 3000, 'docs/reference/gp2-burst.md#the-credit-bucket; docs/reference/cloudwatch.md#volume-metrics'],
    ]);
    expect(missing.map((s) => s.metric)).toEqual(['derived.read_latency_ms']);
  });

  it('names the store of each line when a chart covers two stores, and a lone entity in the title', () => {
    // the block-cache finding: hits and misses of two stores share one ops/s chart
    const series = (metric: string, label: string, store: string) => ({
      entity_kind: 'node', entity_id: store, entity_name: store, metric, label, unit: 'ops/s',
      t: [0, 60, 180], values: [1, 2, 3], reference_lines: [], found: true,
    });
    const { charts } = toEvidenceCharts(
      {
        finding_id: 'f', window_start: '', window_end: '', step_seconds: 60,
        series: [
          series('tikv.block_cache_hit', 'block-cache hits/s', '10.0.1.14:20160'),
          series('tikv.block_cache_miss', 'block-cache misses/s', '10.0.1.14:20160'),
          series('tikv.block_cache_hit', 'block-cache hits/s', '10.0.1.15:20160'),
          series('tikv.block_cache_miss', 'block-cache misses/s', '10.0.1.15:20160'),
          { ...series('derived.read_latency_ms', 'read latency', 'vol-1'), unit: 'ms', entity_kind: 'volume', entity_name: '10.0.1.14:20160 vol-1' },
        ],
      },
      [], [], 'block-cache-size',
    );
    const [ops, latency] = charts;
    expect(ops!.series.map((s) => s.label)).toEqual([
      'block-cache hits/s (10.0.1.14:20160)',
      'block-cache misses/s (10.0.1.14:20160)',
      'block-cache hits/s (10.0.1.15:20160)',
      'block-cache misses/s (10.0.1.15:20160)',
    ]);
    expect(ops!.title).toBe('block-cache hits/s, block-cache misses/s (ops/s) · 10.0.1.14:20160, 10.0.1.15:20160');
    expect(latency!.series[0]!.label).toBe('read latency');
    expect(latency!.title).toBe('read latency (ms) · 10.0.1.14:20160 vol-1');
    // the evidence step: 60 -> 180 s is a missing minute, a gap the chart draws
    expect(ops!.series[0]!.stepMs).toBe(60_000);
  });

  it('shows bytes as MiB and merges repeated ceilings of series that share a unit', () => {
    const line = { value: 10 * 1024 * 1024, label: 'rocksdb.rate-bytes-per-sec', unit: 'bytes/s', kind: null, source: null };
    const series = (metric: string) => ({
      entity_kind: 'node', entity_id: '10.0.1.10:20160', metric, label: metric, unit: 'bytes/s',
      t: [1], values: [5 * 1024 * 1024], reference_lines: [line], found: true,
    });
    const { charts } = toEvidenceCharts(
      { finding_id: 'f', window_start: '', window_end: '', step_seconds: 60, series: [series('tikv.compaction_write_bytes'), series('tikv.flush_write_bytes')] },
      [], [], 'compaction-rate-limit',
    );
    expect(charts).toHaveLength(1);
    expect(charts[0]!.unit).toBe('MiB/s');
    expect(charts[0]!.series.map((s) => s.points[0]!.value)).toEqual([5, 5]);
    expect(charts[0]!.ceilings).toEqual([
      { id: '0:rocksdb.rate-bytes-per-sec', label: 'rocksdb.rate-bytes-per-sec', value: 10, source: "the compaction-rate-limit rule's threshold" },
    ]);
    expect(charts[0]!.offScale).toEqual([]);
  });

  it('lists a limit far above the data instead of drawing it', () => {
    const GIB = 1024 ** 3;
    const { charts } = toEvidenceCharts(
      {
        finding_id: 'f', window_start: '', window_end: '', step_seconds: 60,
        series: [{
          entity_kind: 'node', entity_id: 'n', metric: 'tikv.compaction_write_bytes', label: 'compaction', unit: 'bytes/s',
          t: [1, 61], values: [40 * 1024 * 1024, 60 * 1024 * 1024], found: true,
          reference_lines: [
            { value: 10 * GIB, label: 'rocksdb.rate-bytes-per-sec', unit: 'bytes/s', kind: null, source: null },
            { value: 125 * 1024 * 1024, label: 'disk ceiling', unit: 'bytes/s', kind: null, source: null },
          ],
        }],
      },
      [], ['PingCAP: Best Practices for TiDB on AWS Cloud (https://www.pingcap.com/blog/best-practices-for-tidb-on-aws-cloud/)'], 'compaction-rate-limit',
    );
    // 10,240 MiB/s is 170x the 60 MiB/s peak: listed; the 125 MiB/s disk ceiling is drawn
    expect(charts[0]!.offScale.map((c) => [c.label, c.value])).toEqual([['rocksdb.rate-bytes-per-sec', 10240]]);
    expect(charts[0]!.ceilings.map((c) => c.label)).toEqual(['disk ceiling']);
  });

  it('takes the source the rule gave a line, without matching numbers', () => {
    const line = { value: 3000, label: 'gp2 burst, while credits last', source: 'AWS: General Purpose SSD volumes (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)' };
    // a measure with the same number and another source must not win over the line's own
    const decoy: Measure = { label: 'burst ceiling', value: 3000, unit: 'IOPS', statistic: null, limit: 3000, limit_label: null, ceiling: null, source: 'decoy' };
    expect(ceilingSource(line, [decoy], ['x'], 'r')).toBe(line.source);
  });

  it('finds a source by the limit label when the values differ, or by a measure that is the limit', () => {
    expect(ceilingSource({ value: 3, label: 'gp2 baseline (3 IOPS/GiB)' }, MEASURES, [], 'r')).toBe('docs/reference/gp2-burst.md#the-credit-bucket');
    const burst: Measure = { label: 'burst ceiling', value: 3000, unit: 'IOPS', statistic: null, limit: null, limit_label: null, ceiling: null, source: 'docs/reference/gp2-burst.md#the-credit-bucket burst' };
    expect(ceilingSource({ value: 3000, label: 'gp2 burst' }, [...MEASURES, burst], ['x'], 'r')).toBe('docs/reference/gp2-burst.md#the-credit-bucket burst');
  });
});
