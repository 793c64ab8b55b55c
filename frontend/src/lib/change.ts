import type { components } from '@/api/schema';
import { formatQuantity } from './format';

export type Change = components['schemas']['Change'];
export type EntityRef = components['schemas']['EntityRef'];

/** The TiKV node an entity pins down (status address, else node id), or null for every node. */
export function tikvNode(entity: EntityRef | null | undefined): string | null {
  if (!entity) return null;
  return entity.status_address ?? entity.node ?? (entity.kind === 'node' ? entity.id : null);
}

/** What a change is applied to: a tikv change's node (null: every node), an AWS change's volume or instance. */
export function appliesTo(change: Change): string | null {
  const entity = change.entity;
  if (!entity) return null;
  if (change.target === 'tikv') return tikvNode(entity);
  return (
    entity.volume_id ??
    (entity.kind === 'volume' ? entity.id : null) ??
    entity.instance_id ??
    (entity.kind === 'instance' ? entity.id : null)
  );
}

/**
 * Where a change applies, as a person reads it: a TiKV node by the name TiKV, PD and TiDB Dashboard give it (its
 * store address, the entity's node), the status address only when nothing else is known; a volume or instance by
 * its id; null for every node.
 */
export function changePlace(change: Change): string | null {
  const entity = change.entity;
  if (change.target !== 'tikv' || !entity) return appliesTo(change);
  return entity.node ?? (entity.kind === 'node' ? entity.id : null) ?? entity.status_address ?? null;
}

// The AWS attributes a change can set, and their units: EC2 ModifyVolume takes Size in GiB, Iops in IOPS and
// Throughput in MiB/s (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_ModifyVolume.html).
export const SETTING_UNITS: Record<string, string> = {
  'volume.size': 'GiB',
  'volume.iops': 'IOPS',
  'volume.throughput': 'MiB/s',
};

// TiKV's size units (ReadableSize, binary: "KB" and "K" are 1024 bytes, as "KiB"); case-sensitive, as TiKV is.
const TIKV_SIZE_UNITS: Record<string, number> = Object.fromEntries(
  ['K', 'M', 'G', 'T', 'P'].flatMap((letter, i) =>
    [letter, `${letter}B`, `${letter}iB`].map((unit) => [unit, 1024 ** (i + 1)] as const),
  ),
);
const TIKV_SIZE = /^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]+)\s*$/;

/**
 * From what size a TiKV size literal is also read in GiB, beside the literal tikv.toml takes ("14745MiB
 * (14.4 GiB)"): the `size_reading` of docs/number-formats.json, as headroom.domain.units.SIZE_READING.
 */
const GIB = 1024 ** 3;
export const SIZE_READING = { unit: 'GiB', from_bytes: GIB } as const;

/** The GiB reading of a TiKV size literal ("14.4 GiB" for "14745MiB"), or null when it adds nothing. */
export function sizeReading(text: string): string | null {
  const [, number, unit] = TIKV_SIZE.exec(text) ?? [];
  const factor = unit === undefined || unit === SIZE_READING.unit ? undefined : TIKV_SIZE_UNITS[unit];
  if (number === undefined || factor === undefined) return null;
  const size = Math.trunc(Number(number) * factor);
  if (size < SIZE_READING.from_bytes) return null;
  return formatQuantity(size / GIB, SIZE_READING.unit);
}

/**
 * A change's value as a person reads it, as the backend writes it (headroom.domain.units.setting_text; both are
 * checked against docs/number-formats.json): an AWS size or rate with its unit ("300 MiB/s"), a tikv.toml value as
 * the config writes it ("4GiB", 4, true, ["no", "lz4"]) with a size's GiB reading from 1 GiB on ("14745MiB
 * (14.4 GiB)"), an absent value as "not set".
 */
export function settingText(value: unknown, key: string): string {
  if (value === null || value === undefined) return 'not set';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    const unit = SETTING_UNITS[key];
    return unit ? formatQuantity(value, unit) : String(value);
  }
  if (typeof value === 'string') {
    const reading = sizeReading(value);
    return reading === null ? value : `${value} (${reading})`;
  }
  if (Array.isArray(value)) return `[${value.map((v) => JSON.stringify(v)).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value);
}

// The AWS attributes a change can set, in words (the names the EC2 console gives them); a TiKV key keeps its own
// dotted name, the one tikv.toml, SET CONFIG and TiKV's documentation use.
const SETTING_LABELS: Record<string, string> = {
  'volume.type': 'Type',
  'volume.size': 'Size',
  'volume.iops': 'IOPS',
  'volume.throughput': 'Throughput',
  'instance.type': 'Instance type',
};

/** A change's setting as a person reads it: "IOPS", "Type", or the TiKV key itself. */
export function settingLabel(key: string): string {
  return SETTING_LABELS[key] ?? key;
}

/**
 * A change of one setting in words, its values written as settingText writes them ("Throughput 125 MiB/s →
 * 250 MiB/s"); a unit the label already says is not repeated ("IOPS 3,000 → 6,000").
 */
export function changeText(key: string, before: unknown, after: unknown): string {
  const label = settingLabel(key);
  const said = SETTING_UNITS[key] === label ? ` ${label}` : null;
  const value = (v: unknown) => {
    const text = settingText(v, key);
    return said && text.endsWith(said) ? text.slice(0, -said.length) : text;
  };
  return `${label} ${value(before)} → ${value(after)}`;
}
