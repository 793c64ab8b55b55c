import { errorMessage } from '@/api/errors';
import { ErrorState } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { useClusters } from '../api';
import { ClustersEmptyState } from './ClustersEmptyState';
import { ClusterTable } from './ClusterTable';

/** The organisation's clusters with loading, empty and error states. */
export function ClustersPanel() {
  const clusters = useClusters();
  if (clusters.isPending) return <LoadingState label="Loading clusters…" />;
  if (clusters.isError) {
    return (
      <ErrorState
        title="Could not load clusters"
        message={errorMessage(clusters.error)}
        onRetry={() => void clusters.refetch()}
      />
    );
  }
  if (clusters.data.items.length === 0) return <ClustersEmptyState />;
  return <ClusterTable clusters={clusters.data.items} />;
}
