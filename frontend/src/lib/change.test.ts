import { describe, expect, it } from 'vitest';
import { changePlace, changeText, type Change } from './change';

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

describe('a change of one setting in words', () => {
  it('names an AWS attribute in words and writes its values with their unit, as the changes table does', () => {
    // EC2 ModifyVolume takes Iops in IOPS and Throughput in MiB/s
    // (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_ModifyVolume.html).
    expect(changeText('volume.iops', 3000, 6000)).toBe('IOPS 3,000 → 6,000');
    expect(changeText('volume.throughput', 125, 250)).toBe('Throughput 125 MiB/s → 250 MiB/s');
    expect(changeText('volume.type', 'gp2', 'gp3')).toBe('Type gp2 → gp3');
  });
  it('keeps a TiKV key as tikv.toml spells it, its value as the config writes it', () => {
    expect(changeText('storage.block-cache.capacity', '8GiB', '4GiB')).toBe('storage.block-cache.capacity 8GiB → 4GiB');
    expect(changeText('gc.enable-compaction-filter', null, false)).toBe('gc.enable-compaction-filter not set → false');
  });
});
