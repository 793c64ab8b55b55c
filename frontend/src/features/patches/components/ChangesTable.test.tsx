import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Change } from '@/lib/change';
import { ChangesTable } from './ChangesTable';

// The demo patch that once overflowed its card: a compression list per level (one unbreakable JSON word) on four stores,
// the same reason on each, and an AWS change on a volume.
const REASON = 'zstd on the lower levels frees disk at the cost of CPU (PingCAP: TiKV configuration file)';
const compression = (store: string): Change => ({
  target: 'tikv',
  key: 'rocksdb.defaultcf.compression-per-level',
  entity: { kind: 'node', id: store, node: store, status_address: store },
  current: ['no', 'no', 'lz4', 'lz4', 'zstd', 'zstd', 'zstd'],
  proposed: ['no', 'no', 'zstd', 'zstd', 'zstd', 'zstd', 'zstd'],
  online: true,
  reason: REASON,
});
const CHANGES: Change[] = [
  compression('10.0.1.10:20180'),
  compression('10.0.1.11:20180'),
  { ...compression('10.0.1.12:20180'), current: ['no', 'no', 'lz4', 'lz4', 'lz4', 'zstd', 'zstd'] },
  {
    target: 'aws',
    key: 'volume.type',
    entity: { kind: 'volume', id: 'vol-0f4d9870d6505f951', volume_id: 'vol-0f4d9870d6505f951' },
    current: 'gp2',
    proposed: 'gp3',
    online: true,
    reason: 'gp3 gives 3,000 IOPS at any size',
  },
];

describe('the Changes table of a patch', () => {
  it('names each node by its store address and writes an AWS value with its unit', () => {
    // TiKV, PD and TiDB Dashboard name a store by its server address (:20160); the changes carry the status
    // address (:20180), which only SET CONFIG and curl need.
    const nodes = ['10', '11', '12'].map((n) => ({ status_address: `10.0.1.${n}:20180`, address: `10.0.1.${n}:20160` }));
    const throughput: Change = {
      target: 'aws',
      key: 'volume.throughput',
      entity: { kind: 'volume', id: 'vol-0f4d9870d6505f951', volume_id: 'vol-0f4d9870d6505f951' },
      current: 125,
      proposed: 300,
      online: true,
      reason: 'more throughput',
    };
    render(<ChangesTable changes={[...CHANGES.slice(0, 2), throughput]} nodes={nodes} />);
    const table = screen.getByRole('table', { name: 'Changes in this patch' });
    const [stores, volume] = within(table).getAllByRole('row').slice(1);
    expect(within(stores!).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['10.0.1.10:20160', '10.0.1.11:20160']);
    expect(table).not.toHaveTextContent(':20180');
    expect(within(volume!).getAllByRole('cell').map((c) => c.textContent).slice(1, 3)).toEqual(['125 MiB/s', '300 MiB/s']);
  });

  it('writes a TiKV size as tikv.toml takes it, with its GiB reading from 1 GiB on', () => {
    const cache: Change = {
      target: 'tikv',
      key: 'storage.block-cache.capacity',
      entity: null,
      current: '512MiB',
      proposed: '14745MiB',
      online: true,
      reason: 'a bigger block cache',
    };
    render(<ChangesTable changes={[cache]} />);
    const table = screen.getByRole('table', { name: 'Changes in this patch' });
    const [row] = within(table).getAllByRole('row').slice(1);
    const cells = within(row!).getAllByRole('cell').map((c) => c.textContent);
    expect(cells).toContain('512MiB');
    expect(cells).toContain('14745MiB (14.4 GiB)');
  });

  it('merges the changes that differ only in their node into one row naming the nodes', () => {
    render(<ChangesTable changes={CHANGES} />);
    const table = screen.getByRole('table', { name: 'Changes in this patch' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(3); // .10 and .11 share every value; .12's current differs; the volume's own row
    const [both, other, volume] = rows.map((row) => within(row).getAllByRole('cell').map((c) => c.textContent));
    expect(within(rows[0]!).getAllByRole('listitem').map((li) => li.textContent)).toEqual([
      '10.0.1.10:20180',
      '10.0.1.11:20180',
    ]);
    expect(both).toEqual([
      '10.0.1.10:2018010.0.1.11:20180',
      '["no", "no", "lz4", "lz4", "zstd", "zstd", "zstd"]',
      '["no", "no", "zstd", "zstd", "zstd", "zstd", "zstd"]',
      REASON,
    ]);
    expect(other?.[0]).toBe('10.0.1.12:20180');
    expect(volume).toEqual(['vol-0f4d9870d6505f951', 'gp2', 'gp3', 'gp3 gives 3,000 IOPS at any size']);
    expect(within(rows[2]!).getByRole('rowheader')).toHaveTextContent('volume.type');
  });

  it('labels each value for the stacked layout of a phone', () => {
    render(<ChangesTable changes={CHANGES.slice(0, 1)} />);
    const labels = screen.getAllByRole('cell').map((c) => c.getAttribute('data-label'));
    expect(labels).toEqual(['On', 'Current', 'Proposed', 'Reason']);
  });
});
