import { AuditLogPanel } from '@/features/org';
import { usePageTitle } from '@/lib/usePageTitle';
import { useSettingsCaller } from './settings-session';

export default function SettingsAuditLogPage() {
  usePageTitle('Audit log');
  const { role } = useSettingsCaller();
  return (
    <>
      <div className="page__header">
        <h1>Audit log</h1>
        <p className="page__lead">Who did what in this organisation, newest first.</p>
      </div>
      <AuditLogPanel role={role} />
    </>
  );
}
