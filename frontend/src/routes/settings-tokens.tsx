import { TokensPanel } from '@/features/org';
import { usePageTitle } from '@/lib/usePageTitle';
import { useSettingsCaller } from './settings-session';

export default function SettingsTokensPage() {
  usePageTitle('API tokens');
  const { role } = useSettingsCaller();
  return (
    <>
      <div className="page__header">
        <h1>API tokens</h1>
        <p className="page__lead">Tokens let scripts and CI call the Headroom API.</p>
      </div>
      <TokensPanel role={role} />
    </>
  );
}
