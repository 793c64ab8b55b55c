import { Link, Navigate, useNavigate } from 'react-router';
import { atLeast } from '@/features/org';
import { ConnectAwsForm } from '@/features/sources';
import { usePageTitle } from '@/lib/usePageTitle';
import { useSettingsCaller } from './settings-session';

export default function SettingsAwsNewPage() {
  usePageTitle('Connect AWS account');
  const navigate = useNavigate();
  const { role } = useSettingsCaller();
  // Viewers cannot connect sources (the API answers 403); send them back to the list.
  if (!atLeast(role, 'admin')) return <Navigate to="/settings/sources" replace />;
  return (
    <>
      <p>
        <Link to="/settings/sources">← Data sources</Link>
      </p>
      <div className="page__header">
        <h1>Connect AWS account</h1>
        <p className="page__lead">
          Headroom reads EC2 instances, EBS volumes and their CloudWatch metrics. It never changes anything.
        </p>
      </div>
      <ConnectAwsForm onCreated={(c) => void navigate(`/settings/sources/aws/${c.id}`)} />
    </>
  );
}
