/**
 * The what-if form as rows a person edits (a volume, an instance, a TiKV key) and the API's Change objects they
 * stand for. Pure: the page keeps the rows in state, sends `toChanges(rows).changes`, and maps an API error on
 * `changes[i]` back to the row that produced change i.
 */
import { ApiError } from '@/api/errors';
import { tikvNode, type Change } from '@/lib/change';

/** EBS volume types the catalog knows (backend/headroom/domain/catalog/volume_types.py). */
export const VOLUME_TYPES = ['gp3', 'gp2', 'io2', 'io1', 'st1', 'sc1'] as const;
/** Types whose IOPS are provisioned (a parameter of the volume), and the one whose throughput is (AWS EBS). */
const IOPS_TYPES = new Set(['gp3', 'io1', 'io2']);
const THROUGHPUT_TYPES = new Set(['gp3']);

export const iopsApplies = (type: string) => IOPS_TYPES.has(type);
export const throughputApplies = (type: string) => THROUGHPUT_TYPES.has(type);

/** A volume as the form knows it (from the cluster's nodes). */
export interface VolumeChoice {
  volumeId: string;
  type: string;
  sizeGib: number;
  /** Provisioned IOPS; null when the type derives them (gp2, st1, sc1). */
  iops: number | null;
  /** Provisioned throughput (gp3); null otherwise. */
  throughputMibps: number | null;
  label: string;
}

export interface InstanceChoice {
  instanceId: string;
  type: string;
  label: string;
}

export interface NodeChoice {
  /** What a tikv change names the node by (its status address, else its store address). */
  ref: string;
  storeAddress: string;
  statusAddress: string | null;
}

export interface Choices {
  volumes: VolumeChoice[];
  instances: InstanceChoice[];
  nodes: NodeChoice[];
}

export interface VolumeRow {
  id: string;
  kind: 'volume';
  volumeId: string;
  type: string;
  size: string;
  iops: string;
  throughput: string;
}

export interface InstanceRow {
  id: string;
  kind: 'instance';
  instanceId: string;
  type: string;
}

export interface TikvRow {
  id: string;
  kind: 'tikv';
  /** '' for every node. */
  node: string;
  key: string;
  value: string;
}

/** A change the form has no editor for (e.g. volume.create from a finding): sent as it is, can be removed. */
export interface OtherRow {
  id: string;
  kind: 'other';
  change: Change;
}

export type Row = VolumeRow | InstanceRow | TikvRow | OtherRow;
export type RowErrors = Record<string, Partial<Record<string, string>>>;

let nextId = 0;
const newId = () => `row-${++nextId}`;

/** A volume row starting at the volume's current settings (nothing changes until a field does). */
export function volumeRow(v: VolumeChoice): VolumeRow {
  return {
    id: newId(),
    kind: 'volume',
    volumeId: v.volumeId,
    type: v.type,
    size: String(v.sizeGib),
    iops: v.iops === null ? '' : String(v.iops),
    throughput: v.throughputMibps === null ? '' : String(v.throughputMibps),
  };
}

export function instanceRow(i: InstanceChoice): InstanceRow {
  return { id: newId(), kind: 'instance', instanceId: i.instanceId, type: i.type };
}

export function tikvRow(): TikvRow {
  return { id: newId(), kind: 'tikv', node: '', key: '', value: '' };
}

/** A tikv.toml value as typed: true/false and numbers as JSON, anything else ("4GiB", "lz4") as text. */
export function parseValue(text: string): string | number | boolean {
  const t = text.trim();
  if (t === 'true' || t === 'false') return t === 'true';
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  return t;
}

const positiveInt = (s: string) => /^\d+$/.test(s.trim()) && Number(s) >= 1;
const positiveNumber = (s: string) => /^\d+(\.\d+)?$/.test(s.trim()) && Number(s) > 0;
// An instance type as EC2 spells it: family.size (m6i.2xlarge, r7gd.metal-48xl).
const INSTANCE_TYPE = /^[a-z][a-z0-9-]*\.[a-z0-9-]+$/;
// A dotted tikv.toml key (storage.block-cache.capacity, raftstore.store-io-pool-size).
const TIKV_KEY = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/;

/** The Change objects the rows stand for, which row each came from, and the rows' own input errors. */
export function toChanges(rows: readonly Row[], choices: Choices): { changes: Change[]; rowOf: string[]; errors: RowErrors } {
  const changes: Change[] = [];
  const rowOf: string[] = [];
  const errors: RowErrors = {};
  const add = (row: Row, change: Change) => {
    changes.push(change);
    rowOf.push(row.id);
  };
  const fail = (row: Row, field: string, message: string) => {
    errors[row.id] = { ...errors[row.id], [field]: message };
  };
  for (const row of rows) {
    if (row.kind === 'other') {
      add(row, row.change);
    } else if (row.kind === 'volume') {
      const vol = choices.volumes.find((v) => v.volumeId === row.volumeId);
      if (!vol) {
        fail(row, 'volume', 'Pick a volume.');
        continue;
      }
      const entity = { kind: 'volume' as const, id: vol.volumeId, volume_id: vol.volumeId };
      if (!positiveInt(row.size)) fail(row, 'size', 'A whole number of GiB, at least 1.');
      if (iopsApplies(row.type) && row.iops.trim() !== '' && !positiveInt(row.iops)) {
        fail(row, 'iops', 'A whole number of IOPS, at least 1.');
      }
      if (throughputApplies(row.type) && row.throughput.trim() !== '' && !positiveNumber(row.throughput)) {
        fail(row, 'throughput', 'MiB/s above 0.');
      }
      if (errors[row.id]) continue;
      if (row.type !== vol.type) add(row, { target: 'aws', key: 'volume.type', entity, proposed: row.type });
      if (Number(row.size) !== vol.sizeGib) add(row, { target: 'aws', key: 'volume.size', entity, proposed: Number(row.size) });
      if (iopsApplies(row.type) && row.iops.trim() !== '' && Number(row.iops) !== vol.iops) {
        add(row, { target: 'aws', key: 'volume.iops', entity, proposed: Number(row.iops) });
      }
      if (throughputApplies(row.type) && row.throughput.trim() !== '' && Number(row.throughput) !== vol.throughputMibps) {
        add(row, { target: 'aws', key: 'volume.throughput', entity, proposed: Number(row.throughput) });
      }
    } else if (row.kind === 'instance') {
      const inst = choices.instances.find((i) => i.instanceId === row.instanceId);
      const type = row.type.trim();
      if (!inst) fail(row, 'instance', 'Pick an instance.');
      else if (!INSTANCE_TYPE.test(type)) fail(row, 'type', 'An EC2 instance type, e.g. m6i.4xlarge.');
      else if (type !== inst.type) {
        add(row, {
          target: 'aws',
          key: 'instance.type',
          entity: { kind: 'instance', id: inst.instanceId, instance_id: inst.instanceId },
          proposed: type,
        });
      }
    } else {
      const key = row.key.trim();
      if (!TIKV_KEY.test(key)) fail(row, 'key', 'A dotted tikv.toml key, e.g. storage.block-cache.capacity.');
      if (row.value.trim() === '') fail(row, 'value', 'The value as tikv.toml takes it, e.g. 4GiB or 2.');
      if (errors[row.id]) continue;
      const node = choices.nodes.find((n) => n.ref === row.node);
      add(row, {
        target: 'tikv',
        key,
        proposed: parseValue(row.value),
        entity: node
          ? { kind: 'node', id: node.storeAddress, node: node.storeAddress, status_address: node.statusAddress }
          : null,
      });
    }
  }
  return { changes, rowOf, errors };
}

/** Rows for changes a link brings (a finding's option): one row per volume, instance or TiKV key. */
export function rowsFromChanges(changes: readonly Change[], choices: Choices): Row[] {
  const rows: Row[] = [];
  const byVolume = new Map<string, VolumeRow>();
  for (const change of changes) {
    const entity = change.entity ?? null;
    if (change.target === 'aws' && change.key.startsWith('volume.') && change.key !== 'volume.create') {
      const vid = entity?.volume_id ?? (entity?.kind === 'volume' ? entity.id : null);
      const vol = choices.volumes.find((v) => v.volumeId === vid);
      const field = { 'volume.type': 'type', 'volume.size': 'size', 'volume.iops': 'iops', 'volume.throughput': 'throughput' }[
        change.key
      ] as 'type' | 'size' | 'iops' | 'throughput' | undefined;
      if (vol && field) {
        let row = byVolume.get(vol.volumeId);
        if (!row) {
          row = volumeRow(vol);
          byVolume.set(vol.volumeId, row);
          rows.push(row);
        }
        row[field] = String(change.proposed ?? '');
        continue;
      }
    } else if (change.target === 'aws' && change.key === 'instance.type') {
      const iid = entity?.instance_id ?? (entity?.kind === 'instance' ? entity.id : null);
      const inst = choices.instances.find((i) => i.instanceId === iid);
      if (inst) {
        rows.push({ ...instanceRow(inst), type: String(change.proposed ?? '') });
        continue;
      }
    } else if (change.target === 'tikv' && (typeof change.proposed !== 'object' || change.proposed === null)) {
      const ref = tikvNode(entity);
      const node = ref === null ? undefined : choices.nodes.find((n) => [n.ref, n.storeAddress, n.statusAddress].includes(ref));
      rows.push({ ...tikvRow(), node: node?.ref ?? '', key: change.key, value: String(change.proposed ?? '') });
      continue;
    }
    rows.push({ id: newId(), kind: 'other', change });
  }
  return rows;
}

/**
 * Where the API's refusal points: the row of `changes[i]` (InvalidInput's details.field) or of
 * `body.changes.i...` (a validation error), with its message; rowId null when it names no change.
 */
export function apiErrorRow(error: unknown, rowOf: readonly string[]): { rowId: string | null; message: string } | null {
  if (!(error instanceof ApiError) || error.status >= 500) return null;
  const fields: string[] = [];
  const details = error.details;
  if (Array.isArray(details)) {
    for (const d of details as unknown[]) {
      if (typeof d === 'object' && d !== null && typeof (d as { field?: unknown }).field === 'string') {
        fields.push((d as { field: string }).field);
      }
    }
  } else if (typeof details === 'object' && details !== null && typeof (details as { field?: unknown }).field === 'string') {
    fields.push((details as { field: string }).field);
  }
  for (const field of fields) {
    const match = /changes(?:\[(\d+)\]|\.(\d+))/.exec(field);
    if (match) {
      const index = Number(match[1] ?? match[2]);
      return { rowId: rowOf[index] ?? null, message: error.message };
    }
  }
  return { rowId: null, message: error.message };
}
