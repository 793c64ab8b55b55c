import type { Change } from '@/lib/change';

/** The what-if page of a cluster, prefilled with `changes` (a finding's option, say) when given. */
export function whatIfHref(clusterId: string, changes: readonly Change[] = []): string {
  const base = `/clusters/${clusterId}/what-if`;
  if (changes.length === 0) return base;
  const slim = changes.map(({ target, key, entity, proposed }) => ({ target, key, entity: entity ?? null, proposed }));
  return `${base}?${new URLSearchParams({ changes: JSON.stringify(slim) }).toString()}`;
}

/** The changes a what-if link carries (none when the parameter is missing or is not a list of changes). */
export function changesFromSearch(search: URLSearchParams): Change[] {
  const raw = search.get('changes');
  if (!raw) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    if (!Array.isArray(parsed)) return [];
    return parsed.filter(
      (c): c is Change =>
        typeof c === 'object' &&
        c !== null &&
        ((c as Change).target === 'aws' || (c as Change).target === 'tikv') &&
        typeof (c as Change).key === 'string',
    );
  } catch {
    return [];
  }
}
