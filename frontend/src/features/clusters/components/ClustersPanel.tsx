import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { useClusters, useFleet } from '../api';
import { ClustersEmptyState } from './ClustersEmptyState';
import { ClusterTable } from './ClusterTable';

/** The organisation's clusters with loading, empty and error states (`canManage`: may connect sources). */
export function ClustersPanel({ canManage }: { canManage: boolean }) {
  const clusters = useClusters();
  const fleet = useFleet(); // health and spend arrive after the list; the table shows without them
  if (clusters.isPending) return <LoadingState label="Loading clusters…" />;
  if (clusters.isError) {
    return <QueryError title="Could not load clusters" query={clusters} />;
  }
  if (clusters.data.items.length === 0) return <ClustersEmptyState canManage={canManage} />;
  return <ClusterTable clusters={clusters.data.items} fleet={fleet.data} />;
}
