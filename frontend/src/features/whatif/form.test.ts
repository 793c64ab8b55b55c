import { describe, expect, it } from 'vitest';
import { ApiError } from '@/api/errors';
import { apiErrorRow, parseValue, rowsFromChanges, toChanges, type Choices } from './form';

// A gp3 data volume at gp3's included 3,000 IOPS / 125 MiB/s and a gp2 one (no provisioned IOPS; AWS EBS).
const CHOICES: Choices = {
  volumes: [
    { volumeId: 'vol-a', type: 'gp3', sizeGib: 1000, iops: 3000, throughputMibps: 125, label: 'a' },
    { volumeId: 'vol-b', type: 'gp2', sizeGib: 350, iops: null, throughputMibps: null, label: 'b' },
  ],
  instances: [{ instanceId: 'i-1', type: 'm6i.2xlarge', label: 'i-1' }],
  nodes: [{ ref: '10.0.1.13:20180', storeAddress: '10.0.1.13:20160', statusAddress: '10.0.1.13:20180' }],
};
const vol = (id: string) => ({ kind: 'volume' as const, id, volume_id: id });

describe('what-if form', () => {
  it('turns a link\'s changes into one row per volume and back into only what differs', () => {
    const rows = rowsFromChanges(
      [
        { target: 'aws', key: 'volume.type', entity: vol('vol-b'), proposed: 'gp3' },
        { target: 'aws', key: 'volume.iops', entity: vol('vol-b'), proposed: 6000 },
        { target: 'aws', key: 'volume.create', entity: vol('vol-b'), proposed: { size: 20 } },
        { target: 'tikv', key: 'storage.block-cache.capacity', entity: { kind: 'node', id: '10.0.1.13:20160' }, proposed: '4GiB' },
      ],
      CHOICES,
    );
    expect(rows.map((r) => r.kind)).toEqual(['volume', 'other', 'tikv']);
    const { changes, rowOf, errors } = toChanges(rows, CHOICES);
    expect(errors).toEqual({});
    expect(changes.map((c) => [c.key, c.proposed])).toEqual([
      ['volume.type', 'gp3'],
      ['volume.iops', 6000],
      ['volume.create', { size: 20 }],
      ['storage.block-cache.capacity', '4GiB'],
    ]);
    expect(rowOf).toEqual([rows[0]?.id, rows[0]?.id, rows[1]?.id, rows[2]?.id]);
    expect(changes[3]?.entity).toMatchObject({ status_address: '10.0.1.13:20180' });
  });

  it('reads values as tikv.toml has them', () => {
    expect([parseValue('2'), parseValue('true'), parseValue('4GiB'), parseValue(' 0.5 ')]).toEqual([2, true, '4GiB', 0.5]);
  });

  it("points the API's refusal at the row of the change it names", () => {
    const rowOf = ['r1', 'r1', 'r2'];
    const invalid = new ApiError(422, 'invalid_input', 'changes[2]: bad', { field: 'changes[2]' });
    expect(apiErrorRow(invalid, rowOf)).toEqual({ rowId: 'r2', message: 'changes[2]: bad' });
    const validation = new ApiError(422, 'validation_error', 'Check the fields.', [
      { field: 'body.changes.1.target', message: "Input should be 'tikv' or 'aws'" },
    ]);
    expect(apiErrorRow(validation, rowOf)?.rowId).toBe('r1');
    expect(apiErrorRow(new ApiError(503, 'unavailable', 'down'), rowOf)).toBeNull();
  });
});
