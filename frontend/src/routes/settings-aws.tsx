import { Link, useParams } from 'react-router';
import { atLeast } from '@/features/org';
import { AwsConnectionDetail } from '@/features/sources';
import { usePageTitle } from '@/lib/usePageTitle';
import { useSettingsCaller } from './settings-session';

export default function SettingsAwsPage() {
  usePageTitle('AWS connection');
  const { connectionId = '' } = useParams();
  const { role } = useSettingsCaller();
  return (
    <>
      <p>
        <Link to="/settings/sources">← Data sources</Link>
      </p>
      <AwsConnectionDetail key={connectionId} connectionId={connectionId} canManage={atLeast(role, 'admin')} />
    </>
  );
}
