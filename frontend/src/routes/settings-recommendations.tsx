import { RecommendationPreferencesPanel } from '@/features/org';
import { usePageTitle } from '@/lib/usePageTitle';
import { useSettingsCaller } from './settings-session';

export default function SettingsRecommendationsPage() {
  usePageTitle('Recommendation preferences');
  const { role } = useSettingsCaller();
  return (
    <>
      <div className="page__header">
        <h1>Recommendation preferences</h1>
        <p className="page__lead">How much history Headroom needs before it proposes a cut. A cluster can set its own.</p>
      </div>
      <RecommendationPreferencesPanel role={role} />
    </>
  );
}
