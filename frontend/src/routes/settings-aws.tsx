import { useLocation, useParams } from 'react-router';
import { atLeast } from '@/features/org';
import { AwsConnectionDetail, type AwsTestReport } from '@/features/sources';
import { usePageTitle } from '@/lib/usePageTitle';
import { useSettingsCaller } from './settings-session';
import { BackToSources } from './settings-source-page';

export default function SettingsAwsPage() {
  usePageTitle('AWS connection');
  const { connectionId = '' } = useParams();
  const { role } = useSettingsCaller();
  // The test run as the connection was saved (Connect AWS account hands it over when it opens this page).
  const savedTest = (useLocation().state as { savedTest?: AwsTestReport | null } | null)?.savedTest ?? null;
  return (
    <>
      <BackToSources />
      <AwsConnectionDetail
        key={connectionId}
        connectionId={connectionId}
        canManage={atLeast(role, 'admin')}
        savedTest={savedTest}
      />
    </>
  );
}
