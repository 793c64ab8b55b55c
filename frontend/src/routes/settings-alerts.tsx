import { AlertChannelsPanel } from '@/features/alerts/components/AlertChannelsPanel';
import { usePageTitle } from '@/lib/usePageTitle';
import { useSettingsCaller } from './settings-session';

export default function SettingsAlertsPage() {
  usePageTitle('Alerts');
  const { role } = useSettingsCaller();
  return (
    <>
      <div className="page__header">
        <h1>Alerts</h1>
        <p className="page__lead">
          A finding that opens, gets worse or resolves is sent within a minute to each channel that wants its severity,
          once, retried when the service is busy.
        </p>
      </div>
      <AlertChannelsPanel canManage={role !== 'viewer'} />
    </>
  );
}
