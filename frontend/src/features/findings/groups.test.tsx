import { describe, expect, it } from 'vitest';
import type { components } from '@/api/schema';
import { CACHE_FINDING, CACHE_SUMMARY, GP2_FINDING, GP2_SUMMARY } from '@/test/cluster-fixtures';
import { groupRows } from './groups';

type S = components['schemas'];

// The seed article's case (PingCAP, "Best Practices for TiDB on AWS Cloud"): the demo's 350 GiB gp2 volume
// (baseline 3 x 350 = 1,050 IOPS, AWS gp2 docs) out of burst and "shrink the block cache" on the node that uses
// it are one cause; gp3 (3,000 IOPS, no bucket) resolves both: "resolves 2 of 2".
const GROUP: S['FindingGroup'] = {
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
const GP2 = { ...GP2_SUMMARY, group: GROUP };
const CACHE = { ...CACHE_SUMMARY, group: GROUP };
const ALONE: S['FindingSummary'] = {
  ...CACHE_SUMMARY,
  id: 'f0000000-0000-4000-8000-000000000009',
  rule: 'thread-pool-saturation',
  title: 'tikv-9: scheduler pool saturated',
  dedup_key: 'thread-pool-saturation/demo-prod (demo)/node:tikv-9/scheduler',
  group: null,
};

describe('groupRows', () => {
  it('puts the members of a group together, the primary fix first, and leaves the others alone', () => {
    const rows = groupRows([CACHE, ALONE, GP2]);
    expect(rows.map((r) => (r.kind === 'group' ? r.members.map((m) => m.id) : r.finding.id))).toEqual([
      [GP2_FINDING, CACHE_FINDING],
      ALONE.id,
    ]);
    // a group with one member left in the (filtered) list is that finding alone
    expect(groupRows([CACHE, ALONE]).map((r) => r.kind)).toEqual(['finding', 'finding']);
  });
});
