import { ScrollRegion } from '@/components/ScrollRegion';
import { appliesTo, type Change } from '@/lib/change';

/** A setting's value as text that can wrap: lists and maps get a space after each comma (JSON has none). */
export function valueText(value: unknown): string {
  if (value === null || value === undefined) return 'not set';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return `[${value.map((v) => JSON.stringify(v)).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value);
}

interface ChangeRow {
  key: string;
  /** The nodes, volumes or instances it applies to, in the patch's order ("all nodes" when none). */
  on: string[];
  current: string;
  proposed: string;
  reason: string;
}

/** One row per change, the changes that differ only in their node merged (a setting raised on six stores is one
 * row naming the six, not six rows repeating the same values and reason). */
export function changeRows(changes: Change[]): ChangeRow[] {
  const rows = new Map<string, ChangeRow>();
  for (const change of changes) {
    const current = valueText(change.current);
    const proposed = valueText(change.proposed);
    const reason = change.reason ?? '';
    const group = JSON.stringify([change.target, change.key, current, proposed, reason]);
    const row = rows.get(group) ?? { key: change.key, on: [], current, proposed, reason };
    row.on.push(appliesTo(change) ?? 'all nodes');
    rows.set(group, row);
  }
  return [...rows.values()];
}

/**
 * The patch's changes: setting, where, current and proposed values, and why. Fixed columns that wrap their
 * values (a per-level compression list, a reason of three lines) within the card; on a phone each change is a
 * block of labelled lines. The roles are spelled out because a table laid out as blocks loses them in some
 * browsers.
 */
export function ChangesTable({ changes }: { changes: Change[] }) {
  return (
    <ScrollRegion label="Changes table">
      <table className="table changes-table" role="table">
        <caption className="visually-hidden">Changes in this patch</caption>
        <colgroup>
          <col className="changes-table__setting" />
          <col className="changes-table__on" />
          <col className="changes-table__value" />
          <col className="changes-table__value" />
          <col className="changes-table__reason" />
        </colgroup>
        <thead role="rowgroup">
          <tr role="row">
            <th scope="col" role="columnheader">
              Setting
            </th>
            <th scope="col" role="columnheader">
              On
            </th>
            <th scope="col" role="columnheader">
              Current
            </th>
            <th scope="col" role="columnheader">
              Proposed
            </th>
            <th scope="col" role="columnheader">
              Reason
            </th>
          </tr>
        </thead>
        <tbody role="rowgroup">
          {changeRows(changes).map((row, i) => (
            <tr key={i} role="row">
              <th scope="row" role="rowheader" className="mono">
                {row.key}
              </th>
              <td role="cell" className="mono" data-label="On">
                {row.on.length === 1 ? (
                  row.on[0]
                ) : (
                  <ul className="plain-list" aria-label={`${row.key} on`}>
                    {row.on.map((on) => (
                      <li key={on}>{on}</li>
                    ))}
                  </ul>
                )}
              </td>
              <td role="cell" className="mono" data-label="Current">
                {row.current}
              </td>
              <td role="cell" className="mono" data-label="Proposed">
                {row.proposed}
              </td>
              <td role="cell" data-label="Reason">
                {row.reason}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
