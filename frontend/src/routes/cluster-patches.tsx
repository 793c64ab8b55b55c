import { PatchesPanel } from '@/features/patches/components/PatchesPanel';
import { usePageTitle } from '@/lib/usePageTitle';
import { useClusterContext } from './cluster-layout';

export default function ClusterPatchesPage() {
  const { cluster } = useClusterContext();
  usePageTitle(`Patches · ${cluster.name}`);
  return (
    <section aria-labelledby="patches-heading">
      <h2 id="patches-heading">Patches</h2>
      <PatchesPanel clusterId={cluster.id} />
    </section>
  );
}
