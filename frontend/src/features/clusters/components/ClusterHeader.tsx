import { formatDateTime } from '@/lib/format';
import { errorMessage } from '@/api/errors';
import { useSourceBadges, type ClusterDetail, type SourceBadge } from '../api';

const DEPLOYMENT_LABEL: Record<ClusterDetail['deployment_kind'], string> = {
  tiup: 'TiUP',
  operator: 'TiDB Operator',
  manual: 'Manual',
};

const STATUS_LABEL: Record<SourceBadge['status'], string> = {
  ok: 'healthy',
  failing: 'failing',
  unknown: 'not checked yet',
  simulated: 'simulated',
};

function badgeTitle(badge: SourceBadge): string {
  if (badge.status === 'failing' && badge.lastError) return `Last error: ${badge.lastError}`;
  if (badge.lastSuccessAt) return `Last success: ${formatDateTime(badge.lastSuccessAt)}`;
  if (badge.kind === 'Demo') return 'This cluster is the simulated demo fleet.';
  return 'No collection has finished yet.';
}

/** How healthy the sources feeding the cluster are. Mounted only where it is shown: it fetches both source lists. */
function SourceHealthList({ cluster }: { cluster: ClusterDetail }) {
  const badges = useSourceBadges(cluster.id, cluster.is_demo);
  return (
    <ul className="source-badges" aria-label="Source health">
      {badges.isPending && <li className="muted">Checking sources…</li>}
      {badges.isError && <li className="badge badge--failing">Sources: {errorMessage(badges.error)}</li>}
      {badges.data?.length === 0 && (
        <li className="badge badge--unknown" title="Connect AWS and Prometheus under Settings.">
          No sources connected
        </li>
      )}
      {badges.data?.map((badge) => (
        <li key={badge.key} className={`badge badge--${badge.status}`} title={badgeTitle(badge)}>
          {badge.kind}: {badge.name} — {STATUS_LABEL[badge.status]}
        </li>
      ))}
    </ul>
  );
}

/** The cluster's name, TiKV version and (with `showSources`, on the overview) how healthy its sources are. */
export function ClusterHeader({ cluster, showSources = false }: { cluster: ClusterDetail; showSources?: boolean }) {
  return (
    <div className="cluster-header">
      <div>
        <h1>{cluster.name}</h1>
        <p className="page__lead">
          TiKV {cluster.tikv_version} · deployed with {DEPLOYMENT_LABEL[cluster.deployment_kind]}
        </p>
      </div>
      {showSources && <SourceHealthList cluster={cluster} />}
    </div>
  );
}
