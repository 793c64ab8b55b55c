import { useParams } from 'react-router';
import { atLeast } from '@/features/org';
import { PrometheusDetail } from '@/features/sources';
import { usePageTitle } from '@/lib/usePageTitle';
import { useSettingsCaller } from './settings-session';
import { BackToSources } from './settings-source-page';

export default function SettingsPrometheusPage() {
  usePageTitle('Prometheus source');
  const { sourceId = '' } = useParams();
  const { role } = useSettingsCaller();
  return (
    <>
      <BackToSources />
      <PrometheusDetail key={sourceId} sourceId={sourceId} canManage={atLeast(role, 'admin')} />
    </>
  );
}
