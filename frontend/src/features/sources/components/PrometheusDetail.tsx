import { useNavigate } from 'react-router';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { formatTimestamp } from '@/lib/format';
import { useDeletePrometheusSource, usePrometheusSource, useTestPrometheusSource } from '../api';
import { PrometheusBackfillPanel } from './BackfillPanels';
import { HealthBadge } from './HealthBadge';
import { RemoveSection, TestConnectionSection } from './SourceSections';
import { PrometheusTestResult } from './PrometheusTestResult';

const AUTH_LABEL = { none: 'None', bearer: 'Bearer token', basic: 'Basic auth' } as const;

/** One Prometheus source: settings and health, the connection test and the history import. */
export function PrometheusDetail({ sourceId, canManage }: { sourceId: string; canManage: boolean }) {
  const source = usePrometheusSource(sourceId);
  const test = useTestPrometheusSource(sourceId);
  const remove = useDeletePrometheusSource();
  const navigate = useNavigate();

  if (source.isPending) return <LoadingState label="Loading the Prometheus source…" />;
  if (source.isError) {
    return <QueryError title="Could not load the Prometheus source" query={source} />;
  }
  const s = source.data;
  return (
    <>
      <div className="page__header">
        <h1>{s.name}</h1>
        <p className="page__lead">Prometheus source</p>
      </div>
      <section className="settings-section" aria-labelledby="src-heading">
        <h2 id="src-heading">Source</h2>
        <dl className="facts">
          <dt>URL</dt>
          <dd>
            <code>{s.base_url}</code>
          </dd>
          <dt>Label selector</dt>
          <dd>{s.label_selector ? <code>{`{${s.label_selector}}`}</code> : 'none'}</dd>
          <dt>Grafana</dt>
          <dd>
            {s.grafana_url ? (
              <a href={s.grafana_url} target="_blank" rel="noopener noreferrer">
                {s.grafana_url}
              </a>
            ) : (
              <span className="muted">none given (nodes link to their Grafana dashboard once one is)</span>
            )}
          </dd>
          <dt>Authentication</dt>
          <dd>
            {AUTH_LABEL[s.auth_kind]}
            {s.username && ` as ${s.username}`}
            {s.has_secret && <span className="muted"> (secret stored, hidden)</span>}
          </dd>
          <dt>Created</dt>
          <dd>{formatTimestamp(s.created_at)}</dd>
          <dt>Health</dt>
          <dd>
            <HealthBadge health={s.health} />
          </dd>
        </dl>
      </section>
      <TestConnectionSection
        test={test}
        onTest={() => test.mutate()}
        canManage={canManage}
        checks="Checks the server answers, the credentials work and TiKV series exist under the selector."
      >
        {test.data && <PrometheusTestResult report={test.data} />}
      </TestConnectionSection>
      <section className="settings-section" aria-labelledby="backfill-heading">
        <h2 id="backfill-heading">History import</h2>
        <PrometheusBackfillPanel sourceId={sourceId} canManage={canManage} />
      </section>
      {canManage && (
        <RemoveSection
          remove={remove}
          onRemove={() => remove.mutate(s.id, { onSuccess: () => void navigate('/settings/sources') })}
          confirmText={`Remove the Prometheus source "${s.name}"?`}
          label="Remove source"
        />
      )}
    </>
  );
}
