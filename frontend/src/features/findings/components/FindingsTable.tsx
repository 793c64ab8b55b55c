import { Link } from 'react-router';
import { formatDateTime } from '@/lib/format';
import type { FindingSummary } from '../api';
import { findingPath, STATUS_LABEL } from './labels';
import { SeverityBadge } from './SeverityBadge';

export function FindingsTable({ clusterId, findings }: { clusterId: string; findings: FindingSummary[] }) {
  return (
    <div className="table-wrap">
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
        <tbody>
          {findings.map((f) => (
            <tr key={f.id}>
              <td>
                <SeverityBadge severity={f.severity} />
              </td>
              <th scope="row">
                <Link to={findingPath(clusterId, f.id)}>{f.title}</Link>
              </th>
              <td className="mono">{f.rule}</td>
              <td>{STATUS_LABEL[f.status]}</td>
              <td>{Math.round(f.confidence * 100)}%</td>
              <td>
                <time dateTime={f.last_seen_at}>{formatDateTime(f.last_seen_at)}</time>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
