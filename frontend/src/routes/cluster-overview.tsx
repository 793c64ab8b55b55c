import { Link } from 'react-router';
import { ClusterApplyPanel } from '@/features/apply/components/ClusterApplyPanel';
import { ChangeLedger } from '@/features/changes/components/ChangeLedger';
import { AdviseNowButton } from '@/features/clusters/components/AdviseNowButton';
import { ClusterLookbackPanel } from '@/features/clusters/components/ClusterLookbackPanel';
import { FIRST_ANALYSIS, FirstAnalysisNotice, neverAdvised } from '@/features/clusters/components/FirstAnalysisNotice';
import { NodesTable } from '@/features/clusters/components/NodesTable';
import { SeverityCountsPanel } from '@/features/findings/components/SeverityCountsPanel';
import { TopFindings } from '@/features/findings/components/TopFindings';
import { NextCeilings } from '@/features/projections/components/NextCeilings';
import { useClusterContext } from './cluster-layout';

export default function ClusterOverviewPage() {
  const { cluster, canManage, isOwner } = useClusterContext();
  const pending = neverAdvised(cluster);
  return (
    <div className="overview">
      <section className="card" aria-labelledby="overview-findings">
        <div className="card__header">
          <h2 id="overview-findings">Open findings</h2>
          <AdviseNowButton clusterId={cluster.id} canManage={canManage} />
        </div>
        {pending ? <FirstAnalysisNotice /> : <SeverityCountsPanel clusterId={cluster.id} />}
      </section>
      <section className="card" aria-labelledby="overview-top">
        <div className="card__header">
          <h2 id="overview-top">Top findings by impact</h2>
          <Link to={`/clusters/${cluster.id}/findings`}>All findings</Link>
        </div>
        {pending ? <p className="muted">{FIRST_ANALYSIS}</p> : <TopFindings clusterId={cluster.id} />}
      </section>
      <section className="card" aria-labelledby="overview-ceilings">
        <h2 id="overview-ceilings">Next ceilings</h2>
        {pending ? <p className="muted">{FIRST_ANALYSIS}</p> : <NextCeilings clusterId={cluster.id} />}
      </section>
      <section className="card" aria-labelledby="overview-changes">
        <h2 id="overview-changes">Changes and their effect</h2>
        <ChangeLedger clusterId={cluster.id} />
      </section>
      <section className="card" aria-labelledby="overview-lookback">
        <h2 id="overview-lookback">Lookback for cost recommendations</h2>
        <ClusterLookbackPanel clusterId={cluster.id} canManage={canManage} />
      </section>
      <section className="card" aria-labelledby="overview-apply">
        <h2 id="overview-apply">Apply</h2>
        <ClusterApplyPanel clusterId={cluster.id} isOwner={isOwner} />
      </section>
      <section className="card" aria-labelledby="overview-nodes">
        <h2 id="overview-nodes">Nodes</h2>
        <NodesTable clusterId={cluster.id} />
      </section>
    </div>
  );
}
