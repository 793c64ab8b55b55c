import { InvitationsPanel } from '@/features/org';
import { usePageTitle } from '@/lib/usePageTitle';
import { useSettingsCaller } from './settings-session';

export default function SettingsInvitationsPage() {
  usePageTitle('Invitations');
  const { role } = useSettingsCaller();
  return (
    <>
      <div className="page__header">
        <h1>Invitations</h1>
        <p className="page__lead">Invite colleagues with a role; each link works once.</p>
      </div>
      <InvitationsPanel role={role} />
    </>
  );
}
