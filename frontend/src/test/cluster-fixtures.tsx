/** Data for the cluster pages' tests, shaped like the API's answers (frontend/openapi.json, a demo cluster). */
import { configure } from '@testing-library/react';
import { http, HttpResponse, type RequestHandler } from 'msw';
import type { components } from '@/api/schema';
import { SESSION } from '@/test/render';
import { apiUrl } from '@/test/server';

type S = components['schemas'];

// These pages chain several requests (cluster, then findings, then details); on a loaded 2-core machine the
// default 1 s of findBy* is too short for the last of them.
configure({ asyncUtilTimeout: 5_000 });

export const CLUSTER_ID = 'c0ffee00-0000-4000-8000-000000000001';
export const NODE_A = 'd0000000-0000-4000-8000-00000000000a';
export const NODE_B = 'd0000000-0000-4000-8000-00000000000b';
export const GP2_FINDING = 'f0000000-0000-4000-8000-000000000001';
export const CACHE_FINDING = 'f0000000-0000-4000-8000-000000000002';
export const PATCH_ID = 'e0000000-0000-4000-8000-000000000001';

export const CLUSTER: S['ClusterRead'] = {
  id: CLUSTER_ID,
  name: 'demo-prod (demo)',
  tikv_version: 'v8.5.1',
  deployment_kind: 'tiup',
  tags: { 'headroom.demo': 'true', environment: 'demo' },
  is_demo: true,
  advised_at: '2026-11-29T04:45:00Z',
  created_at: '2026-11-22T04:50:43Z',
};

export const VIEWER_SESSION = { ...SESSION, role: 'viewer' as const };

const summary = {
  cluster_id: CLUSTER_ID,
  status: 'open' as const,
  first_seen_at: '2026-11-22T04:53:00Z',
  last_seen_at: '2026-11-22T05:00:00Z',
  resolved_at: null,
  snoozed_until: null,
};

export const GP2_SUMMARY: S['FindingSummary'] = {
  ...summary,
  id: GP2_FINDING,
  rule: 'gp2-burst-depletion',
  entity_kind: 'volume',
  entity_id: 'vol-043ed06aaced3aa8a',
  severity: 'critical',
  title: 'vol-043ed06aaced3aa8a (gp2 350 GiB): BurstBalance fell to 0%; 835 min at the 1,050 IOPS baseline',
  confidence: 0.85,
  dedup_key: 'gp2-burst-depletion/demo-prod (demo)/volume:vol-043ed06aaced3aa8a',
  severity_rank: 1,
  impact_summary: 'sustained IOPS 1,050 IOPS -> 3,000 IOPS with no bucket; −$2.00/month',
  headroom_before_pct: -36.6,
  headroom_after_pct: 52.2,
  headroom_gain_pct: 88.8,
  monthly_cost_delta_usd: -2,
  impact_score: 88.8,
  impact_basis: 'headroom',
};

export const CACHE_SUMMARY: S['FindingSummary'] = {
  ...summary,
  id: CACHE_FINDING,
  rule: 'block-cache-size',
  entity_kind: 'tikv_node',
  entity_id: '10.0.1.14:20160',
  severity: 'warning',
  title: '10.0.1.14:20160: read IOPS at the ceiling with a 27% block-cache hit ratio: shrink the block cache to 4GiB',
  confidence: 0.7,
  dedup_key: 'block-cache-size/demo-prod (demo)/node:10.0.1.14:20160/shrink',
  severity_rank: 2,
  impact_summary: '10.4 GiB move from the block cache to the page cache',
  headroom_before_pct: 0,
  headroom_after_pct: 10,
  headroom_gain_pct: 10,
  monthly_cost_delta_usd: null,
  impact_score: 10,
  impact_basis: 'headroom',
};

// A case after PingCAP's "Best Practices for TiDB on AWS Cloud" (docs/reference/pingcap-guidance.md#block-cache-on-ebs): the demo's 350 GiB gp2 volume
// (baseline 3 x 350 = 1,050 IOPS, AWS gp2 docs) out of burst and "shrink the block cache" on the node that uses
// it are one cause; gp3 (3,000 IOPS, no bucket) resolves both: "resolves 2 of 2".
export const GROUP: S['FindingGroup'] = {
  id: 'group-4bf735e8733d438b',
  cause: 'disk I/O of node 10.0.1.14:20160',
  primary: GP2_SUMMARY.dedup_key,
  fix: [GP2_SUMMARY.dedup_key],
  fix_label: 'gp3 350 GiB, 3,000 IOPS, 250 MiB/s',
  members: [GP2_SUMMARY.dedup_key, CACHE_SUMMARY.dedup_key],
  related: [CACHE_SUMMARY.dedup_key],
  resolves: [GP2_SUMMARY.dedup_key, CACHE_SUMMARY.dedup_key],
  remaining: [],
  measured: true,
  summary: 'Primary fix: gp3 350 GiB, 3,000 IOPS, 250 MiB/s resolves 2 of 2',
};
export const GP2_GROUPED = { ...GP2_SUMMARY, group: GROUP };
export const CACHE_GROUPED = { ...CACHE_SUMMARY, group: GROUP };
export const ALONE: S['FindingSummary'] = {
  ...CACHE_SUMMARY,
  id: 'f0000000-0000-4000-8000-000000000009',
  rule: 'thread-pool-saturation',
  title: 'tikv-9: scheduler pool saturated',
  dedup_key: 'thread-pool-saturation/demo-prod (demo)/node:tikv-9/scheduler',
  group: null,
};

export function findingList(items: S['FindingSummary'][]): S['FindingList'] {
  const counts = { critical: 0, warning: 0, info: 0 };
  for (const f of items) counts[f.severity] += 1;
  return { items, total: items.length, counts };
}

// An Impact with only the figures a test names (the API sends every field, null when unknown).
function impact(figures: Partial<S['Impact']> & Pick<S['Impact'], 'summary'>): S['Impact'] {
  return {
    metric: null, unit: null, before: null, after: null, headroom_before_pct: null, headroom_after_pct: null,
    monthly_cost_before_usd: null, monthly_cost_after_usd: null, monthly_cost_delta_usd: null, price_region: null,
    ...figures,
  };
}

const EVIDENCE_COUNTS = { threshold_pct: null, share_of_window: null, longest_run_minutes: null, episodes: null, per_node: [] };

export const GP2_FINDING_DETAIL: S['FindingRead'] = {
  ...GP2_SUMMARY,
  why: 'gp2 earns I/O credits at 3 per GiB per second and spends them above that baseline (AWS gp2 documentation).',
  evidence: {
    condition: 'BurstBalance <= 10% in the window',
    window_start: '2026-11-21T04:53:00Z',
    window_end: '2026-11-22T04:53:00Z',
    step_seconds: 60,
    ...EVIDENCE_COUNTS,
    series: [],
    measures: [
      {
        label: 'minimum BurstBalance',
        unit: '%',
        value: 0,
        limit: 10,
        source: 'AWS: Amazon CloudWatch metrics for Amazon EBS (https://docs.aws.amazon.com/ebs/latest/userguide/using_cloudwatch_ebs.html)',
        statistic: 'min',
        limit_label: 'low-balance threshold',
        ceiling: null,
      },
      {
        label: 'drain-period demand p95',
        unit: 'IOPS',
        value: 1433.8,
        limit: 1050,
        source: 'AWS: General Purpose SSD volumes (gp2 I/O credits and burst) (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)',
        statistic: 'p95',
        limit_label: 'gp2 baseline (3 IOPS/GiB)',
        ceiling: {
          id: 'data_baseline_iops',
          label: 'gp2 baseline IOPS',
          value: 1050,
          unit: 'IOPS',
          kind: 'sustained',
          valid_from: null,
          valid_to: null,
          source: 'gp2 350 GiB: AWS: General Purpose SSD volumes (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)',
        },
      },
    ],
    corroboration: ['a full bucket (5.4 M credits) lasts 234 min at the drain-period demand'],
    // headroom.domain.forecast.burst: 40 % of 5.4 M credits at 2,500 - 1,050 IOPS lasts 1,490 s (docs/reference/gp2-burst.md#the-credit-bucket)
    forecasts: [
      {
        kind: 'burst_empty', label: 'ebs.burst_balance', within_seconds: 1490, at: '2026-11-22T05:17:50Z',
        earliest: '2026-11-22T05:10:00Z', latest: '2026-11-22T05:30:00Z', value: 1050, unit: 'IOPS', demand: 2500,
        balance_pct: 40, method: 'physics: gp2 bucket stepped along the demand trend', source: 'AWS: General Purpose SSD volumes (gp2 I/O credits and burst) (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)',
      },
      {
        kind: 'refill', label: 'ebs.burst_balance', within_seconds: 7200, at: null, earliest: null, latest: null,
        value: null, unit: 'IOPS', demand: 300, balance_pct: null, method: 'physics: refill at the off-peak demand',
        source: 'AWS: General Purpose SSD volumes (gp2 I/O credits and burst) (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)',
      },
    ],
  },
  impact: {
    unit: 'IOPS',
    before: 1050,
    after: 3000,
    metric: 'sustained IOPS ceiling',
    summary: 'sustained IOPS 1,050 IOPS -> 3,000 IOPS with no bucket; −$2.00/month',
    headroom_before_pct: -36.6,
    headroom_after_pct: 52.2,
    monthly_cost_before_usd: 35,
    monthly_cost_after_usd: 33,
    monthly_cost_delta_usd: -2,
    price_region: 'us-east-1',
  },
  changes: [
    { target: 'aws', key: 'volume.type', entity: { kind: 'volume', id: 'vol-043ed06aaced3aa8a' }, current: 'gp2', proposed: 'gp3', online: true, reason: 'gp3 sustains what gp2 only bursts to' },
    { target: 'aws', key: 'volume.iops', entity: { kind: 'volume', id: 'vol-043ed06aaced3aa8a' }, current: null, proposed: 3000, online: true, reason: 'gp3 sustains what gp2 only bursts to' },
  ],
  options: [
    { label: 'gp3 350 GiB, 3,000 IOPS, 250 MiB/s', notes: [], impact: impact({ summary: 'sustained IOPS 1,050 -> 3,000' }), changes: [] },
    {
      label: 'gp2 grown to 638 GiB',
      notes: [],
      impact: impact({ summary: 'sustained IOPS 1,050 IOPS -> 1,914 IOPS; +$28.80/month' }),
      changes: [
        {
          key: 'volume.size', target: 'aws', current: 350, proposed: 638, online: true, reason: 'grow gp2',
          entity: { kind: 'volume', id: 'vol-043ed06aaced3aa8a', node: null, instance_id: null, volume_id: null, status_address: null },
        },
      ],
    },
  ],
  sources: ['AWS: General Purpose SSD volumes (gp2 I/O credits and burst) (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)', 'AWS: Amazon CloudWatch metrics for Amazon EBS (https://docs.aws.amazon.com/ebs/latest/userguide/using_cloudwatch_ebs.html)'],
  notes: [],
  patches: [],
  history: [{ at: '2026-11-22T04:53:13Z', action: 'finding.opened', actor_user_id: null, details: {} }],
};

// The gp2 finding's evidence series as GET /findings/{id}/evidence/series returns them: three 1-minute points
// (the real window is 24 h), the balance draining, demand held at the 1,050 IOPS baseline of 350 GiB (docs/reference/gp2-burst.md#baseline-and-burst).
const T0 = Date.parse('2026-11-22T04:50:00Z') / 1000;
export const GP2_EVIDENCE_SERIES: S['EvidenceChartRead'] = {
  finding_id: GP2_FINDING,
  window_start: '2026-11-22T04:50:00Z',
  window_end: '2026-11-22T04:53:00Z',
  step_seconds: 60,
  series: [
    {
      id: 'volume:vol-043ed06aaced3aa8a:ebs.burst_balance',
      entity_kind: 'volume',
      entity_id: 'vol-043ed06aaced3aa8a',
      entity_name: 'vol-043ed06aaced3aa8a',
      statistic: 'avg',
      step_seconds: 60,
      span_seconds: null,
      metric: 'ebs.burst_balance',
      label: 'BurstBalance vol-043ed06aaced3aa8a',
      unit: 'Percent',
      t: [T0, T0 + 60, T0 + 120],
      values: [12, 4, 0],
      reference_lines: [{ value: 10, label: 'low', unit: '%', kind: null, source: "Headroom's threshold: a low balance (How Headroom decides: Burst buckets: when a forecast is a finding)" }],
      found: true, in_force: null,
    },
    {
      id: 'volume:vol-043ed06aaced3aa8a:derived.counted_iops',
      entity_kind: 'volume',
      entity_id: 'vol-043ed06aaced3aa8a',
      entity_name: 'vol-043ed06aaced3aa8a',
      statistic: 'avg',
      step_seconds: 60,
      span_seconds: null,
      metric: 'derived.counted_iops',
      label: 'counted IOPS vol-043ed06aaced3aa8a',
      unit: 'IOPS',
      t: [T0, T0 + 60, T0 + 120],
      values: [3000, null, 1050],
      reference_lines: [
        // as the gp2-burst-depletion rule draws them (domain/advisor/rules/burst.py): each with its kind and source
        { value: 1050, label: "gp2 baseline (3 IOPS/GiB), the finding's limit", unit: 'IOPS', kind: 'sustained', source: 'AWS: General Purpose SSD volumes (gp2 I/O credits and burst) (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)' },
        // a line of a finding stored before lines carried their source
        { value: 3000, label: 'gp2 burst, while credits last', unit: 'IOPS', kind: null, source: null },
      ],
      found: true, in_force: null,
    },
    {
      id: 'volume:vol-043ed06aaced3aa8a:derived.read_latency_ms',
      entity_kind: 'volume',
      entity_id: 'vol-043ed06aaced3aa8a',
      entity_name: 'vol-043ed06aaced3aa8a',
      statistic: 'avg',
      step_seconds: 60,
      span_seconds: null,
      metric: 'derived.read_latency_ms',
      label: 'read latency vol-043ed06aaced3aa8a',
      unit: 'ms',
      t: [],
      values: [],
      reference_lines: [],
      found: false, in_force: null,
    },
  ],
};

export const CACHE_FINDING_DETAIL: S['FindingRead'] = {
  ...CACHE_SUMMARY,
  why: 'A block cache larger than the hot set starves the page cache.',
  evidence: {
    condition: 'block cache > the hot set',
    window_start: '2026-11-21T04:53:00Z',
    window_end: '2026-11-22T04:53:00Z',
    step_seconds: 60,
    ...EVIDENCE_COUNTS,
    measures: [],
    corroboration: [],
    forecasts: [],
    series: [],
  },
  impact: impact({
    unit: 'GiB',
    summary: '10.4 GiB move from the block cache to the page cache',
    headroom_before_pct: 0,
    headroom_after_pct: 10,
  }),
  changes: [
    { target: 'tikv', key: 'storage.block-cache.capacity', entity: { kind: 'node', id: '10.0.1.14:20160', node: '10.0.1.14:20160', status_address: '10.0.1.14:20180' }, current: '14745MiB', proposed: '4GiB', online: true, reason: "PingCAP's 4 GB per 32 GB" },
  ],
  options: [],
  sources: ['PingCAP: Best Practices for TiDB on AWS Cloud (https://docs.pingcap.com/tidb/stable/best-practices-for-tidb-on-aws-cloud)'],
  notes: [],
  patches: [],
  history: [],
};

// m6i.2xlarge and m5.2xlarge: 2,500 / 10,000 and 2,300 / 4,750 Mbps, 12,000 / 40,000 and 12,000 / 18,750 IOPS
// (docs/reference/ec2-ebs-limits.md#limits-table); MB/s = Mbps / 8 (docs/reference/ec2-ebs-limits.md#units).
const M6I_2XLARGE: S['InstanceEbsLimits'] = {
  baseline_throughput_mbps: 312.5,
  max_throughput_mbps: 1250,
  baseline_iops: 12000,
  max_iops: 40000,
  bursts: true,
  source: 'AWS: Amazon EBS-optimized instances (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ebs-optimized.html)',
};
const M5_2XLARGE: S['InstanceEbsLimits'] = {
  ...M6I_2XLARGE,
  baseline_throughput_mbps: 287.5,
  max_throughput_mbps: 593.75,
  max_iops: 18750,
};

function node(
  id: string,
  address: string,
  store: number,
  instance: S['NodeInstance'] | null,
  volumes: S['NodeVolume'][],
): S['NodeRead'] {
  return {
    id,
    cluster_id: CLUSTER_ID,
    store_id: store,
    store_address: `${address}:20160`,
    status_address: `${address}:20180`,
    version: 'v8.5.1',
    created_at: '2026-11-22T04:52:55Z',
    last_seen_at: '2026-11-22T05:00:00Z',
    config_versions: [1],
    instance,
    volumes,
    grafana_url: store === 4 ? 'https://grafana.example.com/d/RDVQiEzZz?var-instance=10.0.1.13%3A20180&from=now-6h&to=now' : null,
  };
}

const gp3 = { volume_type: 'gp3', iops_provisioned: true, burstable: false, device: null };

export const NODES: S['NodeList'] = {
  items: [
    node(
      NODE_A,
      '10.0.1.13',
      4,
      {
        instance_id: 'i-1',
        instance_type: 'm6i.2xlarge',
        vcpus: 8,
        memory_gib: 32,
        availability_zone: 'us-east-1a',
        ebs: M6I_2XLARGE,
        console_url: 'https://us-east-1.console.aws.amazon.com/ec2/home?region=us-east-1#InstanceDetails:instanceId=i-1',
      },
      [
        {
          ...gp3,
          volume_id: 'vol-data13',
          role: 'data',
          size_gib: 1000,
          iops: 3000,
          throughput_mibps: 125,
          console_url: 'https://us-east-1.console.aws.amazon.com/ec2/home?region=us-east-1#VolumeDetails:volumeId=vol-data13',
        },
        { ...gp3, volume_id: 'vol-raft13', role: 'raft', size_gib: 20, iops: 3000, throughput_mibps: 125 },
      ],
    ),
    // gp2 350 GiB: a 3 IOPS/GiB baseline of 1,050 IOPS, bursts (below 1 TiB), 250 MiB/s (docs/reference/gp2-burst.md#gp2-throughput)
    node(
      NODE_B,
      '10.0.1.14',
      5,
      { instance_id: 'i-2', instance_type: 'm5.2xlarge', vcpus: 8, memory_gib: 32, availability_zone: 'us-east-1b', ebs: M5_2XLARGE },
      [
        {
          volume_id: 'vol-gp2',
          role: 'data',
          volume_type: 'gp2',
          size_gib: 350,
          iops: 1050,
          iops_provisioned: false,
          throughput_mibps: 250,
          burstable: true,
          device: '/dev/sdf',
        },
      ],
    ),
  ],
  total: 2,
};

export function nodeConfig(nodeId: string): S['ConfigRead'] {
  return {
    id: `cf${nodeId.slice(2)}`,
    node_id: nodeId,
    version: 1,
    source: 'simulated',
    captured_at: '2026-11-22T04:52:55Z',
    content_sha256: 'ab'.repeat(32),
    raw_text: null,
    created: false,
    config: {
      storage: { 'block-cache': { capacity: '14745MiB' }, 'scheduler-worker-pool-size': 4 },
      rocksdb: { 'rate-bytes-per-sec': '10GiB', titan: { enabled: true } },
    },
  };
}

export const PATCH: S['PatchRead'] = {
  id: PATCH_ID,
  cluster_id: CLUSTER_ID,
  created_by_user_id: SESSION.user.id,
  created_at: '2026-11-22T05:10:00Z',
  finding_ids: [CACHE_FINDING],
  base_config_id: null,
  base_config: null,
  changes: [
    {
      target: 'tikv',
      key: 'storage.block-cache.capacity',
      current: '14745MiB',
      proposed: '4GiB',
      online: true,
      reason: "PingCAP's 4 GB per 32 GB",
      entity: { kind: 'node', id: '10.0.1.14:20160', node: '10.0.1.14:20160', status_address: '10.0.1.14:20180' },
    },
  ],
  change_sources: ['block-cache-size/demo/node:10.0.1.14:20160'],
  nodes: [
    {
      status_address: '10.0.1.14:20180',
      address: '10.0.1.14:20160',
      keys: ['storage.block-cache.capacity'],
      has_config: true,
    },
  ],
  formats: ['toml', 'merged', 'diff', 'tiup', 'sql', 'configs'],
  notes: ['From 1 finding(s): block-cache-size.'],
  applied_at: null,
  applied_by_user_id: null,
};

const BAND = {
  t: ['2026-11-22T06:00:00Z', '2026-11-22T12:00:00Z'],
  point: [2900, 2950],
  low: [2800, 2850],
  high: [3000, 3050],
};

/** A node's data-IOPS panel as GET /metrics serves it for a ledger window: three hourly points and the ceiling. */
function ledgerPanel(t0: number, values: number[], ceiling: number): S['NodeMetricsRead'] {
  return {
    cluster_id: CLUSTER_ID,
    node: null,
    start: new Date(t0 * 1000).toISOString(),
    end: new Date((t0 + 3 * 3600) * 1000).toISOString(),
    resolution_seconds: 3600,
    resolution_source: 'rollup',
    points: 300,
    panels: [
      {
        id: 'data_iops',
        title: 'Data volume IOPS',
        unit: 'IOPS',
        series: [
          {
            id: 'data_counted_iops',
            label: 'Total IOPS (256 KiB units)',
            unit: 'IOPS',
            t: values.map((_, i) => t0 + i * 3600),
            statistic: 'avg',
            values,
            step_seconds: 3600,
            span_seconds: null,
            entity_kind: 'volume',
            entity_id: 'vol-0ledger',
            entity_name: '10.0.1.10:20160 vol-0ledger',
          },
        ],
        ceilings: [
          {
            id: 'data_max_iops',
            label: `IOPS ceiling ${ceiling.toLocaleString('en-US')}`,
            value: ceiling,
            unit: 'IOPS',
            kind: 'provisioned',
            source: 'AWS: Amazon EBS volume types',
            valid_from: new Date(t0 * 1000).toISOString(),
            valid_to: new Date((t0 + 3 * 3600) * 1000).toISOString(),
          },
        ],
        forecasts: [],
        notes: [],
        projection: null,
      },
    ],
  };
}

/** The change ledger as GET /changes serves it: a patch marked applied that Headroom then saw in AWS. */
export const CHANGES: S['ChangeLedger'] = {
  days: 90,
  items: [
    {
      id: `patch:${PATCH_ID}`,
      kind: 'patch_applied',
      at: '2026-11-02T11:30:00Z',
      who: 'owner@example.com (marked the patch applied)',
      entity_kind: 'volume',
      entity_id: 'vol-gp2',
      changes: [{ key: 'volume.type', before: 'gp2', after: 'gp3', before_text: 'gp2', after_text: 'gp3' }],
      patch_id: PATCH_ID,
      seen_by_headroom: ['volume.type gp2 -> gp3 on vol-gp2, in the EC2 inventory at 2026-11-02 12:00 UTC'],
      findings: [
        {
          id: GP2_FINDING,
          rule: 'gp2-burst-depletion',
          severity: 'critical',
          title: 'vol-gp2 empties its burst bucket every afternoon',
          status: 'resolved',
          resolved_at: '2026-11-02T12:15:00Z',
          resolved_after_change: true,
          predicted: {
            summary: 'IOPS ceiling 1,500 IOPS -> 3,000 IOPS; −$10.00/month',
            metric: 'sustained IOPS ceiling',
            unit: 'IOPS',
            before: 1500,
            after: 3000,
            headroom_before_pct: -12.5,
            headroom_after_pct: 43.7,
            monthly_cost_delta_usd: -10,
          },
          outcome: {
            verdict: 'held',
            summary: 'Held: predicted 97% -> 48.5% (IOPS ceiling 1,500 IOPS -> 3,000 IOPS), measured 97% -> 51%.',
            measure: 'peak use of the data volume IOPS ceiling on 10.0.1.11:20160',
            predicted_before_percent: 97,
            predicted_after_percent: 48.5,
            measured_before_percent: 97,
            measured_after_percent: 51,
            achieved: 0.95,
            measurable_at: null,
            final: false,
          },
        },
      ],
      predicted: {
        window_start: '2026-11-01T11:30:00Z',
        window_end: '2026-11-02T11:30:00Z',
        ceilings: [
          {
            entity_kind: 'volume',
            entity_id: 'vol-gp2',
            dimension: 'iops',
            unit: 'IOPS',
            ceiling: 1500,
            ceiling_after: 3000,
            p99: 1600,
            headroom_pct: -6.7,
            headroom_after_pct: 46.7,
            instance_limit: null,
            instance_limit_after: null,
            volumes_limit: null,
            volumes_limit_after: null,
            binding: null,
            binding_after: null,
            in_force: {
              id: 'data_baseline_iops',
              label: 'gp2 baseline IOPS',
              value: 1500,
              unit: 'IOPS',
              kind: 'sustained',
              valid_from: null,
              valid_to: null,
              source: 'gp2 500 GiB: AWS: General Purpose SSD volumes (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)',
            },
            in_force_after: {
              id: 'data_max_iops',
              label: 'gp3 provisioned IOPS',
              value: 3000,
              unit: 'IOPS',
              kind: 'provisioned',
              valid_from: null,
              valid_to: null,
              source: 'gp3 500 GiB: AWS: General Purpose SSD volumes (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)',
            },
          },
        ],
        resolved: [
          {
            dedup_key: 'gp2-burst-depletion/demo/volume:vol-gp2',
            rule: 'gp2-burst-depletion',
            severity: 'critical',
            title: 'vol-gp2 empties its burst bucket every afternoon',
            finding_id: GP2_FINDING,
          },
        ],
        remaining: [],
        new: [],
        projections: [],
        cost: { before_usd: 50, after_usd: 40, delta_usd: -10, unpriced: [] },
      },
      predicted_note: null,
      effect: {
        before_start: '2026-10-26T11:30:00Z',
        before_end: '2026-10-27T11:30:00Z',
        after_start: '2026-11-02T11:30:00Z',
        after_end: '2026-11-03T11:30:00Z',
        cells: [
          {
            node: '10.0.1.10:20160',
            node_id: NODE_A,
            metric: 'data_iops',
            before_peak_percent: 100,
            after_peak_percent: 56.2,
            ceiling_after: 'gp3 baseline 3,000 IOPS',
          },
        ],
        note: '1 d since the change: compared with the same hours one week earlier; a full week compares a whole weekly cycle.',
      },
    },
  ],
};

/** Two projections as GET /projections serves them: a volume at its IOPS ceiling, a store's disk in 41 days. */
export const PROJECTIONS = {
  total: 3,
  fitted_at: '2026-11-22T05:41:00Z',
  items: [
    {
      id: '7a1c0000-0000-4000-8000-000000000001', entity_kind: 'volume', entity_id: 'vol-0hot', metric: 'iops',
      unit: 'IOPS', ceiling: 3000,
      ceiling_source: 'AWS: Amazon EBS volume types, gp3 500 GiB: sustained (baseline) limit (https://docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html)',
      method: 'ets-daily', history_hours: 168, level_now: 2990, growth_percent_per_week: 3.2, days: 0,
      days_low: 0, days_high: 0, hits_at: '2026-11-22T05:00:00Z', horizon_days: 90, interval: 0.9, band: BAND,
      notes: [], history_start: '2026-10-25T05:00:00Z', history_end: '2026-11-22T05:00:00Z',
      fitted_at: '2026-11-22T05:41:00Z',
    },
    {
      id: '7a1c0000-0000-4000-8000-000000000002', entity_kind: 'node', entity_id: '10.0.1.14:20160', metric: 'used_gib',
      unit: 'GiB', ceiling: 400,
      ceiling_source: '80% of the data volume(s), 500 GiB: PingCAP: PD Configuration File, schedule.low-space-ratio: 0.8 by default, no new regions above it (https://docs.pingcap.com/tidb/stable/pd-configuration-file)',
      method: 'holt', history_hours: 672, level_now: 310, growth_percent_per_week: 1.5, days: 40.6,
      days_low: 33.2, days_high: 52.9, hits_at: '2027-01-01T20:00:00Z', horizon_days: 90, interval: 0.9, band: BAND,
      notes: [], history_start: '2026-10-25T05:00:00Z', history_end: '2026-11-22T05:00:00Z',
      fitted_at: '2026-11-22T05:41:00Z',
    },
    {
      id: '7a1c0000-0000-4000-8000-000000000003', entity_kind: 'instance', entity_id: 'i-0a1b2c3d', metric: 'mibps',
      unit: 'MiB/s', ceiling: 298, ceiling_source: 'm6i.2xlarge: baseline EBS MiB/s (AWS: Amazon EBS-optimized instance types (https://docs.aws.amazon.com/ec2/latest/instancetypes/ec2-nitro-instances.html))',
      method: 'ets-weekly', history_hours: 672, level_now: 120, growth_percent_per_week: 0.4, days: null,
      days_low: null, days_high: null, hits_at: null, horizon_days: 90, interval: 0.9, band: BAND,
      notes: [], history_start: '2026-10-25T05:00:00Z', history_end: '2026-11-22T05:00:00Z',
      fitted_at: '2026-11-22T05:41:00Z',
    },
  ],
} as const;

/** What the server says about the diff (X-Headroom-Notes), as render's raft-engine check words it. */
export const DIFF_NOTES = [
  'raft-engine.dir: this file sets [raft-engine] enable = false, so TiKV keeps the Raft log in RocksDB ' +
    '(raftstore.raftdb-path) and moving raft-engine.dir will not take effect; move raftstore.raftdb-path ' +
    'instead, or enable Raft Engine first',
];

export const DIFF = `--- a/tikv.toml
+++ b/tikv.toml
@@ -33,7 +33,7 @@
 [storage.block-cache]
-capacity = "14745MiB"
+capacity = "4GiB"
`;

export const TOML = `# Headroom patch for cluster demo-prod (demo) (TiKV v8.5.1): tikv.toml keys

[storage.block-cache]
capacity = "4GiB"
`;

const json = (body: unknown) => () => HttpResponse.json(body as never);

/** Handlers for every request the cluster pages make; pass later ones to override. */
export function clusterHandlers({
  session = SESSION,
  findings = [GP2_SUMMARY, CACHE_SUMMARY],
}: { session?: typeof SESSION | typeof VIEWER_SESSION; findings?: S['FindingSummary'][] } = {}): RequestHandler[] {
  const details: Record<string, S['FindingRead']> = {
    [GP2_FINDING]: GP2_FINDING_DETAIL,
    [CACHE_FINDING]: CACHE_FINDING_DETAIL,
  };
  return [
    http.get(apiUrl('/auth/me'), json(session)),
    http.get(apiUrl(`/clusters/${CLUSTER_ID}`), json(CLUSTER)),
    http.get(apiUrl('/sources/aws'), json([])),
    http.get(apiUrl('/sources/prometheus'), json([])),
    http.get(apiUrl(`/clusters/${CLUSTER_ID}/findings`), ({ request }) => {
      const url = new URL(request.url);
      const status = url.searchParams.getAll('status');
      const severity = url.searchParams.getAll('severity');
      const rule = url.searchParams.getAll('rule');
      const items = findings.filter(
        (f) =>
          (status.length === 0 || status.includes(f.status)) &&
          (severity.length === 0 || severity.includes(f.severity)) &&
          (rule.length === 0 || rule.includes(f.rule)),
      );
      // the API's orders (findings/service.py list_findings): severity, or basis, impact_score, then severity
      const basis = ['headroom', 'metric', 'none'];
      items.sort((a, b) =>
        url.searchParams.get('sort') === 'impact'
          ? basis.indexOf(a.impact_basis ?? 'none') - basis.indexOf(b.impact_basis ?? 'none') ||
            (b.impact_score ?? 0) - (a.impact_score ?? 0) ||
            a.severity_rank - b.severity_rank
          : a.severity_rank - b.severity_rank,
      );
      return HttpResponse.json(findingList(items));
    }),
    http.get(apiUrl('/findings/:id/evidence/series'), ({ params }) =>
      String(params.id) === GP2_FINDING
        ? HttpResponse.json(GP2_EVIDENCE_SERIES)
        : HttpResponse.json({ finding_id: String(params.id), window_start: '2026-11-22T04:50:00Z', window_end: '2026-11-22T04:53:00Z', step_seconds: 60, series: [] }),
    ),
    http.get(apiUrl('/findings/:id'), ({ params }) => {
      const detail = details[String(params.id)];
      return detail
        ? HttpResponse.json(detail)
        : HttpResponse.json({ error: { code: 'not_found', message: 'Finding not found.', details: null } }, { status: 404 });
    }),
    // a finding's apply panel: apply is off (the default), so the preview says why and nothing was proposed
    http.get(apiUrl('/findings/:id/apply-plan'), ({ params }) =>
      HttpResponse.json({
        finding_id: String(params.id),
        finding_title: details[String(params.id)]?.title ?? 'Finding',
        cluster_id: CLUSTER_ID,
        tikv_version: 'v8.5.1',
        steps: [],
        refusals: [],
        guards: [],
        predicted: null,
        blocked: ['Apply is turned off for your organisation: an owner can turn it on in Settings › Apply.'],
      }),
    ),
    http.get(apiUrl(`/clusters/${CLUSTER_ID}/apply-plans`), json([])),
    // the overview's settings cards: the organisation's 14-day lookback, apply off (both defaults)
    http.get(apiUrl(`/clusters/${CLUSTER_ID}/recommendation-preferences`),
      json({ lookback_days: null, organization_lookback_days: 14, effective_lookback_days: 14 })),
    http.get(apiUrl(`/clusters/${CLUSTER_ID}/apply-settings`),
      json({ enabled: false, organization_enabled: false, effective_enabled: false, allows: [] })),
    http.get(apiUrl(`/clusters/${CLUSTER_ID}/nodes`), json(NODES)),
    http.get(apiUrl(`/clusters/${CLUSTER_ID}/nodes/:nodeId/config`), ({ params }) =>
      HttpResponse.json(nodeConfig(String(params.nodeId))),
    ),
    http.get(apiUrl(`/clusters/${CLUSTER_ID}/projections`), json(PROJECTIONS)),
    http.get(apiUrl(`/clusters/${CLUSTER_ID}/changes`), json(CHANGES)),
    // the ledger's before/after chart: one panel per window (the week before peaks at 3,000, the week after at 1,700)
    http.get(apiUrl(`/clusters/${CLUSTER_ID}/metrics`), ({ request }) => {
      const start = new URL(request.url).searchParams.get('start') ?? '';
      const t0 = Date.parse(start) / 1000;
      const before = start.startsWith('2026-10-26');
      return HttpResponse.json(ledgerPanel(t0, before ? [2400, 3000, 2900] : [1500, 1700, 1650], before ? 1500 : 3000));
    }),
    http.get(apiUrl(`/clusters/${CLUSTER_ID}/patches`), json({ items: [PATCH], total: 1 })),
    http.get(apiUrl(`/clusters/${CLUSTER_ID}/patches/${PATCH_ID}`), ({ request }) => {
      const format = new URL(request.url).searchParams.get('format');
      if (format === 'diff') {
        return new HttpResponse(DIFF, {
          headers: { 'Content-Type': 'text/x-diff', 'X-Headroom-Notes': JSON.stringify(DIFF_NOTES) },
        });
      }
      if (format === 'toml') {
        return new HttpResponse(TOML, {
          headers: {
            'Content-Type': 'application/toml',
            'Content-Disposition': 'attachment; filename="demo-prod-demo-tikv-patch.toml"',
          },
        });
      }
      return HttpResponse.json(PATCH);
    }),
    http.get(apiUrl('/org/members'), json([
      { user_id: SESSION.user.id, email: SESSION.user.email, full_name: SESSION.user.full_name, role: 'owner', joined_at: '2026-11-01T10:00:00Z' },
    ])),
  ];
}
