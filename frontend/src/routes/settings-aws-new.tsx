import { useNavigate } from 'react-router';
import { ConnectAwsForm } from '@/features/sources';
import { NewSourcePage } from './settings-source-page';

export default function SettingsAwsNewPage() {
  const navigate = useNavigate();
  return (
    <NewSourcePage
      title="Connect AWS account"
      lead="Headroom reads EC2 instances, EBS volumes and their CloudWatch metrics. It never changes anything."
    >
      <ConnectAwsForm
        onCreated={(c) => void navigate(`/settings/sources/aws/${c.id}`, { state: { savedTest: c.test } })}
      />
    </NewSourcePage>
  );
}
