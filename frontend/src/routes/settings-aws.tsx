import { useParams } from 'react-router';
import { atLeast } from '@/features/org';
import { AwsConnectionDetail } from '@/features/sources';
import { usePageTitle } from '@/lib/usePageTitle';
import { useSettingsCaller } from './settings-session';
import { BackToSources } from './settings-source-page';

export default function SettingsAwsPage() {
  usePageTitle('AWS connection');
  const { connectionId = '' } = useParams();
  const { role } = useSettingsCaller();
  return (
    <>
      <BackToSources />
      <AwsConnectionDetail key={connectionId} connectionId={connectionId} canManage={atLeast(role, 'admin')} />
    </>
  );
}
