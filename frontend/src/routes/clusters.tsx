import { ClustersPanel } from '@/features/clusters/components/ClustersPanel';
import { atLeast } from '@/features/org';
import { usePageTitle } from '@/lib/usePageTitle';
import { useSettingsCaller } from './settings-session';

export default function ClustersPage() {
  usePageTitle('Clusters');
  const { role } = useSettingsCaller();
  return (
    <>
      <div className="page__header">
        <h1>Clusters</h1>
        <p className="page__lead">The TiKV clusters Headroom watches for this organisation.</p>
      </div>
      <ClustersPanel canManage={atLeast(role, 'admin')} />
    </>
  );
}
