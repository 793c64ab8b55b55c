import { Link } from 'react-router';
import { formatDate } from '@/lib/format';
import type { Cluster } from '../api';

const DEPLOYMENT_LABEL: Record<Cluster['deployment_kind'], string> = {
  tiup: 'TiUP',
  operator: 'TiDB Operator',
  manual: 'Manual',
};

export function ClusterTable({ clusters }: { clusters: Cluster[] }) {
  return (
    <div className="table-wrap">
      <table className="table">
        <caption className="visually-hidden">Your TiKV clusters</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">TiKV version</th>
            <th scope="col">Deployed with</th>
            <th scope="col">Tags</th>
            <th scope="col">Added</th>
          </tr>
        </thead>
        <tbody>
          {clusters.map((cluster) => {
            const tags = Object.entries(cluster.tags ?? {});
            return (
              <tr key={cluster.id}>
                <th scope="row">
                  <Link to={`/clusters/${cluster.id}`}>{cluster.name}</Link>
                </th>
                <td>{cluster.tikv_version}</td>
                <td>{DEPLOYMENT_LABEL[cluster.deployment_kind]}</td>
                <td>
                  {tags.length === 0 ? (
                    <span className="muted">None</span>
                  ) : (
                    <ul className="tags" aria-label={`Tags of ${cluster.name}`}>
                      {tags.map(([key, value]) => (
                        <li key={key} className="tag">
                          {key}={value}
                        </li>
                      ))}
                    </ul>
                  )}
                </td>
                <td>
                  <time dateTime={cluster.created_at}>{formatDate(cluster.created_at)}</time>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
