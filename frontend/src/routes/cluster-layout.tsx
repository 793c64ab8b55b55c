import { useLayoutEffect, useRef } from 'react';
import { NavLink, Outlet, useLocation, useMatch, useOutletContext, useParams } from 'react-router';
import { ApiError } from '@/api/errors';
import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
// In the entry chunk: the modules it uses, not the features' indexes (which would bring their pages' components).
import { useSession } from '@/features/auth/api';
import { useCluster, type ClusterDetail } from '@/features/clusters/api';
import { ClusterHeader } from '@/features/clusters/components/ClusterHeader';
import { usePageTitle } from '@/lib/usePageTitle';

export interface ClusterContext {
  cluster: ClusterDetail;
  /** Owners and admins may act (advise, acknowledge, patch); viewers only look. */
  canManage: boolean;
  /** Owners alone turn apply on or off for the cluster. */
  isOwner: boolean;
}

/** The cluster and the caller's rights, for the pages under /clusters/:clusterId. */
export function useClusterContext(): ClusterContext {
  return useOutletContext<ClusterContext>();
}

const TABS = [
  { to: '', label: 'Overview', end: true },
  { to: 'findings', label: 'Findings', end: false },
  { to: 'metrics', label: 'Metrics', end: false },
  { to: 'config', label: 'Config', end: false },
  { to: 'patches', label: 'Patches', end: false },
  { to: 'what-if', label: 'What-if', end: false },
] as const;

/**
 * On a narrow screen the tab strip scrolls sideways (a shadow marks the side with more tabs): keep the current
 * tab in sight, e.g. What-if opened from a link, which would otherwise sit beyond the right edge.
 */
function useCurrentTabInView(ready: boolean) {
  const strip = useRef<HTMLElement>(null);
  const { pathname } = useLocation();
  useLayoutEffect(() => {
    const nav = strip.current;
    const tab = nav?.querySelector<HTMLElement>('[aria-current="page"]');
    if (!nav || !tab) return;
    const box = nav.getBoundingClientRect();
    const at = tab.getBoundingClientRect();
    const margin = 24; // a little of the neighbouring tab stays visible, so the strip reads as scrollable
    if (at.left < box.left) nav.scrollLeft -= box.left - at.left + margin;
    else if (at.right > box.right) nav.scrollLeft += at.right - box.right + margin;
  }, [pathname, ready]);
  return strip;
}

export default function ClusterLayout() {
  const { clusterId = '' } = useParams();
  const cluster = useCluster(clusterId);
  const session = useSession();
  // The source badges need both source lists: only the overview shows (and so fetches) them.
  const onOverview = useMatch('/clusters/:clusterId') !== null;
  usePageTitle(cluster.data?.name ?? 'Cluster');
  const tabStrip = useCurrentTabInView(cluster.isSuccess);

  if (cluster.isPending) return <LoadingState label="Loading the cluster…" />;
  if (cluster.isError) {
    if (cluster.error instanceof ApiError && (cluster.error.status === 404 || cluster.error.status === 422)) {
      return (
        <EmptyState title="Cluster not found">
          <p>There is no such cluster in this organisation. It may have been removed.</p>
        </EmptyState>
      );
    }
    return <QueryError title="Could not load the cluster" query={cluster} />;
  }
  const role = session.data?.role;
  const context: ClusterContext = { cluster: cluster.data, canManage: role === 'owner' || role === 'admin',
    isOwner: role === 'owner',
  };
  const base = `/clusters/${cluster.data.id}`;
  return (
    <div className="cluster">
      <ClusterHeader cluster={cluster.data} showSources={onOverview} />
      <nav aria-label="Cluster sections" className="tabs" ref={tabStrip}>
        {TABS.map((tab) => (
          <NavLink
            key={tab.label}
            to={tab.to ? `${base}/${tab.to}` : base}
            end={tab.end}
            className={({ isActive }) => (isActive ? 'tabs__tab tabs__tab--active' : 'tabs__tab')}
          >
            {tab.label}
          </NavLink>
        ))}
      </nav>
      <div className="cluster__body">
        <Outlet context={context} />
      </div>
    </div>
  );
}
