import { useState } from 'react';
import { Link } from 'react-router';
import { formatDate, formatQuantity } from '@/lib/format';
import type { Cluster, ClusterHealth, Fleet } from '../api';
import { FIRST_ANALYSIS } from './FirstAnalysisNotice';

const DEPLOYMENT_LABEL: Record<Cluster['deployment_kind'], string> = {
  tiup: 'TiUP',
  operator: 'TiDB Operator',
  manual: 'Manual',
};

const CEILING_WHAT: Record<NonNullable<ClusterHealth['nearest_ceiling']>['metric'], string> = {
  iops: 'IOPS',
  mibps: 'throughput',
  used_gib: 'disk space',
};

const TIGHTEST_WHAT: Record<NonNullable<ClusterHealth['tightest']>['metric'], string> = {
  data_iops: 'data volume IOPS',
  data_throughput: 'data volume throughput',
  raft_iops: 'raft volume IOPS',
  raft_throughput: 'raft volume throughput',
  instance_iops: 'instance EBS IOPS',
  instance_throughput: 'instance EBS throughput',
};

type SortKey = 'name' | 'health' | 'score' | 'ceiling' | 'spend' | 'savings';

const usd = (v: number) => `$${v.toLocaleString('en-US', { maximumFractionDigits: 0 })}`;

/** Sort value of a column: missing values (no data, nothing projected) sort last whichever the direction. */
function sortValue(key: SortKey, c: Cluster, h: ClusterHealth | undefined): number | string | null {
  // a cluster whose first analysis is running has no findings, score, ceiling or savings yet: it sorts last
  if (h?.advised_at === null && key !== 'name' && key !== 'spend') return null;
  switch (key) {
    case 'name':
      return c.name.toLowerCase();
    case 'health':
      // critical first: a weighted count that keeps one critical above any number of warnings below 1,000
      return h ? -(h.open_by_severity.critical ?? 0) * 1e6 - (h.open_by_severity.warning ?? 0) * 1e3 - (h.open_by_severity.info ?? 0) : null;
    case 'score':
      return h?.headroom_score ?? null;
    case 'ceiling':
      return h?.nearest_ceiling?.days ?? null;
    case 'spend':
      return h ? -h.monthly_spend_usd : null;
    case 'savings':
      return h ? -h.savings_usd : null;
  }
}

function ceilingText(h: ClusterHealth | undefined): string {
  const n = h?.nearest_ceiling;
  if (!n) return 'none within 90 days';
  const what = `${n.entity_kind === 'node' ? 'store' : n.entity_kind} ${n.entity_id} ${CEILING_WHAT[n.metric]}`;
  if (n.days <= 0) return `${what}: reached`;
  const days = Math.max(1, Math.round(n.days));
  return `${what}: in ${days} day${days === 1 ? '' : 's'}`;
}

function ClusterName({ cluster }: { cluster: Cluster }) {
  const tags = Object.entries(cluster.tags ?? {});
  return (
    <th scope="row">
      <Link to={`/clusters/${cluster.id}`}>{cluster.name}</Link>
      <div className="muted small">{DEPLOYMENT_LABEL[cluster.deployment_kind]}</div>
      {tags.length > 0 && (
        <ul className="tags" aria-label={`Tags of ${cluster.name}`}>
          {tags.map(([key, value]) => (
            <li key={key} className="tag">
              {key}={value}
            </li>
          ))}
        </ul>
      )}
    </th>
  );
}

function SortButton({ label, column, sort, onSort }: {
  label: string;
  column: SortKey;
  sort: { key: SortKey; dir: 1 | -1 };
  onSort: (k: SortKey) => void;
}) {
  const active = sort.key === column;
  return (
    <button type="button" className="table__sort" onClick={() => onSort(column)}>
      {label}
      <span aria-hidden="true">{active ? (sort.dir === 1 ? ' ▲' : ' ▼') : ''}</span>
    </button>
  );
}

export function ClusterTable({ clusters, fleet }: { clusters: Cluster[]; fleet?: Fleet }) {
  const [sort, setSort] = useState<{ key: SortKey; dir: 1 | -1 }>({ key: 'name', dir: 1 });
  const health = new Map((fleet?.items ?? []).map((h) => [h.id, h]));
  const onSort = (key: SortKey) => setSort((s) => (s.key === key ? { key, dir: s.dir === 1 ? -1 : 1 } : { key, dir: 1 }));
  const rows = [...clusters].sort((a, b) => {
    const va = sortValue(sort.key, a, health.get(a.id));
    const vb = sortValue(sort.key, b, health.get(b.id));
    if (va === null && vb === null) return a.name.localeCompare(b.name);
    if (va === null) return 1;
    if (vb === null) return -1;
    const order = va < vb ? -1 : va > vb ? 1 : a.name.localeCompare(b.name);
    return order * sort.dir;
  });
  const ariaSort = (key: SortKey) => (sort.key === key ? (sort.dir === 1 ? 'ascending' : 'descending') : 'none');
  return (
    <>
      {fleet && (
        <p className="muted">
          Spend Headroom sees (EBS volumes and EC2 instances, on demand): <strong>{usd(fleet.total_spend_usd)}</strong> a
          month; savings the open findings offer: <strong>{usd(fleet.total_savings_usd)}</strong> a month
          {fleet.items.some((i) => i.advised_at === null) ? ' so far (the first analysis of some clusters is still running)' : ''}.
        </p>
      )}
      <div className="table-scroll" tabIndex={0} role="region" aria-label="Clusters table">
        <table className="table">
          <caption className="visually-hidden">Your TiKV clusters</caption>
          <thead>
            <tr>
              <th scope="col" aria-sort={ariaSort('name')}>
                <SortButton label="Name" column="name" sort={sort} onSort={onSort} />
              </th>
              <th scope="col" aria-sort={ariaSort('health')}>
                <SortButton label="Open findings" column="health" sort={sort} onSort={onSort} />
              </th>
              <th scope="col" aria-sort={ariaSort('score')}>
                <SortButton label="Headroom score" column="score" sort={sort} onSort={onSort} />
              </th>
              <th scope="col" aria-sort={ariaSort('ceiling')}>
                <SortButton label="Nearest ceiling" column="ceiling" sort={sort} onSort={onSort} />
              </th>
              <th scope="col" aria-sort={ariaSort('spend')}>
                <SortButton label="Spend / month" column="spend" sort={sort} onSort={onSort} />
              </th>
              <th scope="col" aria-sort={ariaSort('savings')}>
                <SortButton label="Savings / month" column="savings" sort={sort} onSort={onSort} />
              </th>
              <th scope="col">TiKV</th>
              <th scope="col">Added</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((cluster) => {
              const h = health.get(cluster.id);
              if (h && h.advised_at === null) {
                // Never advised: its findings, savings and ceiling are not known yet (zeros would read "all clear").
                return (
                  <tr key={cluster.id}>
                    <ClusterName cluster={cluster} />
                    <td colSpan={3}>
                      <span role="status">{FIRST_ANALYSIS}</span>
                    </td>
                    <td>{usd(h.monthly_spend_usd)}</td>
                    <td>{FIRST_ANALYSIS}</td>
                    <td>{cluster.tikv_version}</td>
                    <td>
                      <time dateTime={cluster.created_at}>{formatDate(cluster.created_at)}</time>
                    </td>
                  </tr>
                );
              }
              return (
                <tr key={cluster.id}>
                  <ClusterName cluster={cluster} />
                  <td>
                    {h
                      ? `${h.open_by_severity.critical ?? 0} critical, ${h.open_by_severity.warning ?? 0} warning, ${h.open_by_severity.info ?? 0} info`
                      : '—'}
                  </td>
                  <td>
                    {h?.headroom_score === null || h?.headroom_score === undefined ? (
                      <span className="muted">no I/O data yet</span>
                    ) : (
                      <>
                        <strong>{h.headroom_score}</strong>
                        {h.tightest && (
                          <div className="muted small">
                            peak {formatQuantity(h.tightest.peak_percent, '%')} of {h.tightest.node} {TIGHTEST_WHAT[h.tightest.metric]}
                          </div>
                        )}
                      </>
                    )}
                  </td>
                  <td>{h ? ceilingText(h) : '—'}</td>
                  <td>
                    {h ? usd(h.monthly_spend_usd) : '—'}
                    {h && h.unpriced.length > 0 && <div className="muted small">{h.unpriced.length} without a price</div>}
                  </td>
                  <td>{h ? usd(h.savings_usd) : '—'}</td>
                  <td>{cluster.tikv_version}</td>
                  <td>
                    <time dateTime={cluster.created_at}>{formatDate(cluster.created_at)}</time>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {fleet && <p className="muted small">{fleet.score_definition}</p>}
    </>
  );
}
