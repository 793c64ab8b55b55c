import type { ClusterOverview, NodeMetrics } from './api';

/** API-shaped fixtures for the metrics tests (typed against the generated client, so they follow the schema). */
export const NODE_A = '11111111-1111-4111-8111-111111111111';
export const NODE_B = '22222222-2222-4222-8222-222222222222';
const T0 = Date.parse('2026-11-02T06:00:00Z') / 1000;
const SWITCH = '2026-11-02T09:00:00Z';
const END = '2026-11-02T12:00:00Z';
const START = '2026-11-02T06:00:00Z';

export function nodeMetrics(overrides: Partial<NodeMetrics> = {}): NodeMetrics {
  return {
    cluster_id: 'c0000000-0000-4000-8000-000000000000',
    node: {
      id: NODE_A,
      store_address: '10.0.1.5:20160',
      instance_id: 'i-0aaaa',
      instance_type: 'm5.2xlarge',
      data_volume: { volume_id: 'vol-0aaaa', volume_type: 'gp3', size_gib: 500 },
      raft_volume: null,
    },
    start: START,
    end: END,
    resolution_seconds: 60,
    resolution_source: 'raw',
    points: 128,
    panels: [
      {
        id: 'data_iops',
        title: 'Data volume IOPS (vol-0aaaa, gp3 500 GiB)',
        unit: 'IOPS',
        series: [
          { id: 'data_read_iops', label: 'Read IOPS', unit: 'IOPS', t: [T0, T0 + 60, T0 + 300], statistic: 'avg', values: [2700, 2800, 3000], step_seconds: 60, span_seconds: null, entity_kind: 'volume', entity_id: 'vol-0aaaa', entity_name: '10.0.1.5:20160 vol-0aaaa' },
        ],
        ceilings: [
          { id: 'data_max_iops', label: 'gp2 burst IOPS', value: 3000, unit: 'IOPS', kind: 'burst', source: 'gp2 500 GiB: docs/reference/gp2-burst.md#the-credit-bucket', valid_from: START, valid_to: SWITCH },
          { id: 'data_max_iops', label: 'gp3 provisioned IOPS', value: 6000, unit: 'IOPS', kind: 'provisioned', source: 'gp3 500 GiB: docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025', valid_from: SWITCH, valid_to: END },
        ],
        forecasts: [],
        notes: ['The Raft log shares this volume.'],
      },
      {
        id: 'burst_balance',
        title: 'Burst balances',
        unit: '%',
        series: [{ id: 'data_burst_balance', label: 'Data volume BurstBalance', unit: '%', t: [T0, T0 + 60], statistic: 'min', values: [49, 47], step_seconds: 60, span_seconds: null, entity_kind: 'volume', entity_id: 'vol-0aaaa', entity_name: '10.0.1.5:20160 vol-0aaaa' }],
        ceilings: [],
        forecasts: [
          {
            id: 'data_burst_balance',
            label: 'Data volume BurstBalance forecast',
            entity_kind: 'volume',
            entity_id: 'vol-0aaaa',
            bucket: 'gp2',
            now: END,
            balance_percent: 48,
            unit: 'IOPS',
            baseline: 1050,
            burst_rate: 3000,
            demand: 3000,
            seconds_to_empty: 1080,
            seconds_to_empty_low: 900,
            seconds_to_empty_high: 1320,
            empties_at: '2026-11-02T12:18:00Z',
            empties_at_earliest: '2026-11-02T12:15:00Z',
            empties_at_latest: '2026-11-02T12:22:00Z',
            fallback_iops: 1050,
            fallback_mibps: 128,
            refill_seconds: 5000,
            method: 'physics',
            notes: [],
            path: { t: [T0 + 21600, T0 + 22200], percent: [48, 20], lower: [48, 10], upper: [48, 30] },
          },
        ],
        notes: [],
      },
    ],
    ...overrides,
  };
}

export function overview(): ClusterOverview {
  return {
    cluster_id: 'c0000000-0000-4000-8000-000000000000',
    start: START,
    end: END,
    resolution_seconds: 60,
    resolution_source: 'raw',
    peaks_stored: false,
    nodes: [
      {
        node: nodeMetrics().node!,
        utilisation: [
          { metric: 'data_iops', peak_percent: 90, peak_at: '2026-11-02T08:00:00Z', peak_value: 2700, ceiling: { id: 'data_max_iops', label: 'gp2 burst IOPS', value: 3000, unit: 'IOPS', kind: 'burst', source: 'AWS: Amazon EBS General Purpose SSD volumes', valid_from: null, valid_to: null }, ceiling_now: { id: 'data_max_iops', label: 'gp2 burst IOPS', value: 3000, unit: 'IOPS', kind: 'burst', source: 'AWS: Amazon EBS General Purpose SSD volumes', valid_from: null, valid_to: null } },
          { metric: 'data_throughput', peak_percent: 40, peak_at: '2026-11-02T08:00:00Z', peak_value: 50, ceiling: { id: 'data_max_mibps', label: 'gp3 throughput', value: 125, unit: 'MiB/s', kind: 'provisioned', source: 'AWS: Amazon EBS volume types', valid_from: null, valid_to: null }, ceiling_now: null },
        ],
        burst: [{ id: 'data_burst_balance', label: 'Data volume BurstBalance forecast', entity_id: 'vol-0aaaa', balance_percent: 48, seconds_to_empty: 1080, seconds_to_empty_low: 900, seconds_to_empty_high: 1320 }],
        burst_seconds_left: 1080,
      },
      {
        node: { id: NODE_B, store_address: '10.0.1.6:20160', instance_id: 'i-0bbbb', instance_type: 'm6i.2xlarge', data_volume: null, raft_volume: null },
        utilisation: [
          { metric: 'data_iops', peak_percent: 20, peak_at: null, peak_value: 600, ceiling: { id: 'data_max_iops', label: 'gp3 provisioned IOPS', value: 3000, unit: 'IOPS', kind: 'provisioned', source: 'AWS: Amazon EBS volume types', valid_from: null, valid_to: null }, ceiling_now: null },
        ],
        burst: [],
        burst_seconds_left: null,
      },
    ],
  };
}
