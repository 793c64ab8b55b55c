import { describe, expect, it } from 'vitest';
import { GP2_EVIDENCE_SERIES } from '@/test/cluster-fixtures';
import { SOURCE_NOT_RECORDED, ceilingSource, chartTitle, toEvidenceCharts } from './evidenceChart';


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
    const { charts, missing } = toEvidenceCharts(GP2_EVIDENCE_SERIES);
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
    expect(balance!.ceilings).toEqual([{ id: '0:low', label: 'low', value: 10, source: "Headroom's threshold: a low balance (How Headroom decides: Burst buckets: when a forecast is a finding)" }]);
    // each line's own source; a line stored without one says so (no source borrowed from a matching measure)
    expect(iops!.ceilings.map((c) => [c.label, c.value, c.source])).toEqual([
      ["gp2 baseline (3 IOPS/GiB), the finding's limit", 1050, 'AWS: General Purpose SSD volumes (gp2 I/O credits and burst) (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)'],
      ['gp2 burst, while credits last', 3000, SOURCE_NOT_RECORDED],
    ]);
    expect(missing.map((s) => s.metric)).toEqual(['derived.read_latency_ms']);
  });

  it('charts an exceeded check (yes/no) apart from the queue length it used to share an axis with', () => {
    // the volume-ceilings finding: VolumeQueueLength (a count) and VolumeIOPSExceededCheck (1 = exceeded)
    const series = (metric: string, label: string, unit: string, values: number[]) => ({
      id: `volume:vol-1:${metric}`, entity_kind: 'volume' as const, entity_id: 'vol-1', entity_name: 'vol-1', metric,
      label, unit, statistic: 'avg' as const, step_seconds: 60, span_seconds: null, t: [0, 60, 120], values,
      reference_lines: [], found: true, in_force: null,
    });
    const { charts } = toEvidenceCharts({
      finding_id: 'f', window_start: '', window_end: '', step_seconds: 60,
      series: [
        series('ebs.iops_exceeded_check', 'IOPS demand exceeded the volume', 'bool', [0, 1, 1]),
        series('ebs.queue_length', 'VolumeQueueLength', 'Count', [3.5, 12, 14]),
      ],
    });
    expect(charts.map((c) => [c.title, c.flag, c.series.map((s) => s.name)])).toEqual([
      ['IOPS demand exceeded the volume (1 = yes, 0 = no) · vol-1', true, ['IOPS demand exceeded the volume']],
      ['VolumeQueueLength · vol-1', false, ['VolumeQueueLength']],
    ]);
  });

  it('names the store of each line when a chart covers two stores, and a lone entity in the title', () => {
    // the block-cache finding: hits and misses of two stores share one ops/s chart
    const series = (metric: string, label: string, store: string) => ({
      id: `node:${store}:${metric}`, entity_kind: 'node' as const, entity_id: store, entity_name: store, metric, label, unit: 'ops/s',
      statistic: 'avg' as const, step_seconds: 60, span_seconds: null,
      t: [0, 60, 180], values: [1, 2, 3], reference_lines: [], found: true, in_force: null,
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

  it('shows bytes/s as MiB/s and merges repeated ceilings of series that share a unit', () => {
    const line = { value: 10 * 1024 * 1024, label: 'rocksdb.rate-bytes-per-sec', unit: 'bytes/s', kind: 'configured' as const, source: 'PingCAP: TiKV Configuration File, rocksdb.rate-bytes-per-sec (https://docs.pingcap.com/tidb/stable/tikv-configuration-file)' };
    const series = (metric: string) => ({
      id: metric, entity_kind: 'node' as const, entity_id: '10.0.1.10:20160', entity_name: '10.0.1.10:20160', metric, label: metric,
      unit: 'bytes/s', statistic: 'avg' as const, step_seconds: 60, span_seconds: null,
      t: [1], values: [5 * 1024 * 1024], reference_lines: [line], found: true, in_force: null,
    });
    const { charts } = toEvidenceCharts(
      { finding_id: 'f', window_start: '', window_end: '', step_seconds: 60, series: [series('tikv.compaction_write_bytes'), series('tikv.flush_write_bytes')] },
    );
    expect(charts).toHaveLength(1);
    expect(charts[0]!.unit).toBe('MiB/s');
    expect(charts[0]!.series.map((s) => s.points[0]!.value)).toEqual([5, 5]);
    expect(charts[0]!.ceilings).toEqual([
      { id: '0:rocksdb.rate-bytes-per-sec', label: 'rocksdb.rate-bytes-per-sec', value: 10, source: 'PingCAP: TiKV Configuration File, rocksdb.rate-bytes-per-sec (https://docs.pingcap.com/tidb/stable/tikv-configuration-file)' },
    ]);
    expect(charts[0]!.offScale).toEqual([]);
  });

  it('lists a limit far above the data instead of drawing it', () => {
    const GIB = 1024 ** 3;
    const { charts } = toEvidenceCharts(
      {
        finding_id: 'f', window_start: '', window_end: '', step_seconds: 60,
        series: [{
          id: 'compaction', entity_kind: 'node', entity_id: 'n', entity_name: 'n', metric: 'tikv.compaction_write_bytes',
          label: 'compaction', unit: 'bytes/s', statistic: 'avg', step_seconds: 60, span_seconds: null,
          t: [1, 61], values: [40 * 1024 * 1024, 60 * 1024 * 1024], found: true, in_force: null,
          reference_lines: [
            { value: 10 * GIB, label: 'rocksdb.rate-bytes-per-sec', unit: 'bytes/s', kind: null, source: null },
            { value: 125 * 1024 * 1024, label: 'disk ceiling', unit: 'bytes/s', kind: null, source: null },
          ],
        }],
      },
    );
    // 10,240 MiB/s is 170x the 60 MiB/s peak: listed; the 125 MiB/s disk ceiling is drawn
    expect(charts[0]!.offScale.map((c) => [c.label, c.value])).toEqual([['rocksdb.rate-bytes-per-sec', 10240]]);
    expect(charts[0]!.ceilings.map((c) => c.label)).toEqual(['disk ceiling']);
  });

  it('takes the source the rule gave a line, and never guesses one from a matching number or label', () => {
    const line = { value: 3000, label: 'gp2 burst, while credits last', source: 'AWS: General Purpose SSD volumes (gp2 I/O credits and burst) (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)' };
    expect(ceilingSource(line)).toBe(line.source);
    // a line of a finding stored before lines carried their source says so instead of borrowing a measure's
    expect(ceilingSource({ source: null })).toBe(SOURCE_NOT_RECORDED);
    expect(ceilingSource({})).toBe(SOURCE_NOT_RECORDED);
  });
});
