import { useNavigate } from 'react-router';
import { PrometheusForm } from '@/features/sources';
import { NewSourcePage } from './settings-source-page';

export default function SettingsPrometheusNewPage() {
  const navigate = useNavigate();
  return (
    <NewSourcePage
      title="Add Prometheus source"
      lead="The Prometheus that scrapes your TiKV cluster (TiUP or TiDB Operator)."
    >
      <PrometheusForm onCreated={(s) => void navigate(`/settings/sources/prometheus/${s.id}`)} />
    </NewSourcePage>
  );
}
