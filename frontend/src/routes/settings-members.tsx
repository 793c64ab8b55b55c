import { MembersPanel } from '@/features/org';
import { usePageTitle } from '@/lib/usePageTitle';
import { useSettingsCaller } from './settings-session';

export default function SettingsMembersPage() {
  usePageTitle('Members');
  const { role, userId } = useSettingsCaller();
  return (
    <>
      <div className="page__header">
        <h1>Members</h1>
        <p className="page__lead">Who belongs to this organisation and what they may do.</p>
      </div>
      <MembersPanel role={role} currentUserId={userId} />
    </>
  );
}
