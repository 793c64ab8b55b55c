import { Link, useParams } from 'react-router';
import { FindingApplyPlanPanel } from '@/features/apply/components/FindingApplyPlanPanel';
import { FindingDetailPanel } from '@/features/findings/components/FindingDetailPanel';
import { patchPath } from '@/features/patches/components/PatchesPanel';
import { useClusterContext } from './cluster-layout';

export default function ClusterFindingPage() {
  const { cluster, canManage } = useClusterContext();
  const { findingId = '' } = useParams();
  return (
    <>
      <p>
        <Link to={`/clusters/${cluster.id}/findings`}>← All findings</Link>
      </p>
      <FindingDetailPanel
        findingId={findingId}
        canManage={canManage}
        patchPath={(patchId) => patchPath(cluster.id, patchId)}
      />
      <FindingApplyPlanPanel clusterId={cluster.id} findingId={findingId} canManage={canManage} />
    </>
  );
}
