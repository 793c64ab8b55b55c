import { describe, expect, it } from 'vitest';
import { ALONE, CACHE_FINDING, CACHE_GROUPED, GP2_FINDING, GP2_GROUPED } from '@/test/cluster-fixtures';
import { groupRows } from './groups';

describe('groupRows', () => {
  it('puts the members of a group together, the primary fix first, and leaves the others alone', () => {
    const rows = groupRows([CACHE_GROUPED, ALONE, GP2_GROUPED]);
    expect(rows.map((r) => (r.kind === 'group' ? r.members.map((m) => m.id) : r.finding.id))).toEqual([
      [GP2_FINDING, CACHE_FINDING],
      ALONE.id,
    ]);
    // a group with one member left in the (filtered) list is that finding alone
    expect(groupRows([CACHE_GROUPED, ALONE]).map((r) => r.kind)).toEqual(['finding', 'finding']);
  });
});
