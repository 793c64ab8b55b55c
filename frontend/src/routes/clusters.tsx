import { ClustersPanel } from '@/features/clusters';
import { usePageTitle } from '@/lib/usePageTitle';

export default function ClustersPage() {
  usePageTitle('Clusters');
  return (
    <>
      <div className="page__header">
        <h1>Clusters</h1>
        <p className="page__lead">The TiKV clusters Headroom watches for this organisation.</p>
      </div>
      <ClustersPanel />
    </>
  );
}
