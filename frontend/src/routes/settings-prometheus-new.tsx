import { Link, Navigate, useNavigate } from 'react-router';
import { atLeast } from '@/features/org';
import { PrometheusForm } from '@/features/sources';
import { usePageTitle } from '@/lib/usePageTitle';
import { useSettingsCaller } from './settings-session';

export default function SettingsPrometheusNewPage() {
  usePageTitle('Add Prometheus source');
  const navigate = useNavigate();
  const { role } = useSettingsCaller();
  if (!atLeast(role, 'admin')) return <Navigate to="/settings/sources" replace />;
  return (
    <>
      <p>
        <Link to="/settings/sources">← Data sources</Link>
      </p>
      <div className="page__header">
        <h1>Add Prometheus source</h1>
        <p className="page__lead">The Prometheus that scrapes your TiKV cluster (TiUP or TiDB Operator).</p>
      </div>
      <PrometheusForm onCreated={(s) => void navigate(`/settings/sources/prometheus/${s.id}`)} />
    </>
  );
}
