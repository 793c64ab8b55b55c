import { describe, expect, it } from 'vitest';
import { changePlace, type Change } from './change';

describe('where a change applies, as a person reads it', () => {
  const base = { target: 'tikv' as const, key: 'storage.block-cache.capacity', proposed: '4GiB' };
  it('names a TiKV node by its store address (as TiKV, PD and TiDB Dashboard do), not its status port', () => {
    const change: Change = {
      ...base,
      entity: { kind: 'node', id: '10.0.1.14:20160', node: '10.0.1.14:20160', status_address: '10.0.1.14:20180' },
    };
    expect(changePlace(change)).toBe('10.0.1.14:20160');
  });
  it('falls back to the status address only when nothing else names the node, and says every node without one', () => {
    expect(changePlace({ ...base, entity: { kind: 'volume', id: 'vol-1', status_address: '10.0.1.14:20180' } })).toBe(
      '10.0.1.14:20180',
    );
    expect(changePlace({ ...base, entity: null })).toBeNull();
  });
  it('names a volume or an instance by its id', () => {
    const change: Change = {
      target: 'aws',
      key: 'volume.throughput',
      proposed: 300,
      entity: { kind: 'volume', id: 'vol-1', volume_id: 'vol-1' },
    };
    expect(changePlace(change)).toBe('vol-1');
  });
});
