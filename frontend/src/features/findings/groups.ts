import type { Finding, FindingSummary } from './api';

/** Findings that share a cause (the API's `group`; docs/thresholds/finding-groups.md). */
export type FindingGroup = NonNullable<FindingSummary['group']>;
export type RelatedFinding = NonNullable<Finding['related']>[number];

export type FindingRow =
  | { kind: 'finding'; finding: FindingSummary }
  | { kind: 'group'; group: FindingGroup; members: FindingSummary[] };

/**
 * The list as rows: a finding without a group stays where it is; the members of a group become one block at
 * the place of its first member (the list's order), the primary fix's findings first, then the others in list
 * order. A group with only one member in the (filtered) list is shown as that finding alone.
 */
export function groupRows(findings: FindingSummary[]): FindingRow[] {
  const byGroup = new Map<string, FindingSummary[]>();
  for (const f of findings) {
    if (f.group) byGroup.set(f.group.id, [...(byGroup.get(f.group.id) ?? []), f]);
  }
  const rows: FindingRow[] = [];
  const placed = new Set<string>();
  for (const f of findings) {
    const group = f.group;
    const members = group ? (byGroup.get(group.id) ?? []) : [];
    if (!group || members.length < 2) {
      rows.push({ kind: 'finding', finding: f });
      continue;
    }
    if (placed.has(group.id)) continue;
    placed.add(group.id);
    const inFix = (m: FindingSummary) => group.fix.includes(m.dedup_key);
    rows.push({ kind: 'group', group, members: [...members.filter(inFix), ...members.filter((m) => !inFix(m))] });
  }
  return rows;
}

/** "Primary fix" for the findings whose changes make up the group's primary fix, else "Related". */
export function roleInGroup(group: FindingGroup, dedupKey: string): 'Primary fix' | 'Related' {
  return group.fix.includes(dedupKey) ? 'Primary fix' : 'Related';
}
