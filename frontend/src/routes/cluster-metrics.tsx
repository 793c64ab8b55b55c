import { useSearchParams } from 'react-router';
import { rangeOf } from '@/features/metrics/api';
import { MetricsView } from '@/features/metrics/components/MetricsView';
import { usePageTitle } from '@/lib/usePageTitle';
import { useClusterContext } from './cluster-layout';

/** /clusters/:clusterId/metrics: the node and range live in the address (?node=…&range=24h) to share a view. */
export default function ClusterMetricsPage() {
  const { cluster } = useClusterContext();
  usePageTitle(`Metrics · ${cluster.name}`);
  const [params, setParams] = useSearchParams();
  return (
    <section aria-labelledby="metrics-heading">
      <h2 id="metrics-heading" className="visually-hidden">
        Metrics
      </h2>
      <MetricsView
        clusterId={cluster.id}
        nodeId={params.get('node') ?? undefined}
        range={rangeOf(params.get('range'))}
        onChange={({ nodeId, range }) => {
          const next = new URLSearchParams();
          if (nodeId) next.set('node', nodeId);
          next.set('range', range);
          setParams(next, { replace: true });
        }}
      />
    </section>
  );
}
