import type { components } from '@/api/schema';

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
