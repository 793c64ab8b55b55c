import { OrgApplyPanel } from '@/features/apply/components/OrgApplyPanel';
import { usePageTitle } from '@/lib/usePageTitle';
import { useSettingsCaller } from './settings-session';

export default function SettingsApplyPage() {
  usePageTitle('Apply');
  const { role } = useSettingsCaller();
  return (
    <>
      <div className="page__header">
        <h1>Apply</h1>
        <p className="page__lead">
          Let Headroom carry out approved fixes itself, one step at a time. Off until an owner turns it on.
        </p>
      </div>
      <OrgApplyPanel isOwner={role === 'owner'} canStop={role === 'owner' || role === 'admin'} />
    </>
  );
}
