import { ScrollRegion } from '@/components/ScrollRegion';
import { appliesTo, settingText, type Change } from '@/lib/change';

/** A node of the patch: the status address its changes name, and its store address. */
export interface PatchNode {
  status_address: string;
  address?: string | null;
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
export function changeRows(changes: Change[], nodes: PatchNode[] = []): ChangeRow[] {
  // A node is named by its store address, as TiKV, PD and TiDB Dashboard name it; a change carries the status
  // address, which only the commands that talk to the node (SET CONFIG, curl) need.
  const nodeLabel = (statusAddress: string) => nodes.find((n) => n.status_address === statusAddress)?.address ?? statusAddress;
  const rows = new Map<string, ChangeRow>();
  for (const change of changes) {
    const current = settingText(change.current, change.key);
    const proposed = settingText(change.proposed, change.key);
    const reason = change.reason ?? '';
    const group = JSON.stringify([change.target, change.key, current, proposed, reason]);
    const row = rows.get(group) ?? { key: change.key, on: [], current, proposed, reason };
    const on = appliesTo(change);
    row.on.push(on === null ? 'all nodes' : change.target === 'tikv' ? nodeLabel(on) : on);
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
export function ChangesTable({ changes, nodes = [] }: { changes: Change[]; nodes?: PatchNode[] }) {
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
          {changeRows(changes, nodes).map((row, i) => (
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
