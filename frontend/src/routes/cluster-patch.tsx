import { Link, useParams } from 'react-router';
import { PatchDetailPanel } from '@/features/patches/components/PatchDetail';
import { useClusterContext } from './cluster-layout';

export default function ClusterPatchPage() {
  const { cluster, canManage } = useClusterContext();
  const { patchId = '' } = useParams();
  return (
    <>
      <p>
        <Link to={`/clusters/${cluster.id}/patches`}>← All patches</Link>
      </p>
      <PatchDetailPanel clusterId={cluster.id} patchId={patchId} canManage={canManage} />
    </>
  );
}
