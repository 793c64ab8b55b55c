import { Link, useParams } from 'react-router';
import { atLeast } from '@/features/org';
import { PrometheusDetail } from '@/features/sources';
import { usePageTitle } from '@/lib/usePageTitle';
import { useSettingsCaller } from './settings-session';

export default function SettingsPrometheusPage() {
  usePageTitle('Prometheus source');
  const { sourceId = '' } = useParams();
  const { role } = useSettingsCaller();
  return (
    <>
      <p>
        <Link to="/settings/sources">← Data sources</Link>
      </p>
      <PrometheusDetail key={sourceId} sourceId={sourceId} canManage={atLeast(role, 'admin')} />
    </>
  );
}
