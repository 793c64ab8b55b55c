import { Link } from 'react-router';
import { ScrollRegion } from '@/components/ScrollRegion';
import { formatDateTime } from '@/lib/format';
import type { FindingSummary } from '../api';
import { groupRows, roleInGroup, type FindingGroup } from '../groups';
import { findingPath, STATUS_LABEL } from './labels';
import { SeverityBadge } from './SeverityBadge';

function FindingRowCells({ clusterId, f, group }: { clusterId: string; f: FindingSummary; group?: FindingGroup }) {
  return (
    <tr className={group ? 'findings-group__member' : undefined}>
      <td>
        <SeverityBadge severity={f.severity} />
      </td>
      <th scope="row">
        <Link to={findingPath(clusterId, f.id)}>{f.title}</Link>
        {group && <span className="muted"> · {roleInGroup(group, f.dedup_key)}</span>}
      </th>
      <td className="mono">{f.rule}</td>
      <td>{STATUS_LABEL[f.status]}</td>
      <td>{Math.round(f.confidence * 100)}%</td>
      <td>
        <time dateTime={f.last_seen_at}>{formatDateTime(f.last_seen_at)}</time>
      </td>
    </tr>
  );
}

export function FindingsTable({ clusterId, findings }: { clusterId: string; findings: FindingSummary[] }) {
  const rows = groupRows(findings);
  return (
    <ScrollRegion label="Findings table">
      <table className="table">
        <caption className="visually-hidden">Findings</caption>
        <thead>
          <tr>
            <th scope="col">Severity</th>
            <th scope="col">Finding</th>
            <th scope="col">Rule</th>
            <th scope="col">State</th>
            <th scope="col">Confidence</th>
            <th scope="col">Last seen</th>
          </tr>
        </thead>
        {rows.map((row) =>
          row.kind === 'finding' ? (
            <tbody key={row.finding.id}>
              <FindingRowCells clusterId={clusterId} f={row.finding} />
            </tbody>
          ) : (
            <tbody key={row.group.id} className="findings-group" aria-label={`Same cause: ${row.group.cause}`}>
              <tr>
                <th scope="rowgroup" colSpan={6} className="findings-group__head">
                  {row.group.summary}
                  <span className="muted"> · same cause: {row.group.cause}</span>
                </th>
              </tr>
              {row.members.map((f) => (
                <FindingRowCells key={f.id} clusterId={clusterId} f={f} group={row.group} />
              ))}
            </tbody>
          ),
        )}
      </table>
    </ScrollRegion>
  );
}
