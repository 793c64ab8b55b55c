import { atLeast } from '@/features/org';
import { SourcesOverview } from '@/features/sources';
import { usePageTitle } from '@/lib/usePageTitle';
import { useSettingsCaller } from './settings-session';

export default function SettingsSourcesPage() {
  usePageTitle('Data sources');
  const { role } = useSettingsCaller();
  return (
    <>
      <div className="page__header">
        <h1>Data sources</h1>
        <p className="page__lead">The AWS accounts and Prometheus servers Headroom reads, and whether they work.</p>
      </div>
      <SourcesOverview canManage={atLeast(role, 'admin')} />
    </>
  );
}
