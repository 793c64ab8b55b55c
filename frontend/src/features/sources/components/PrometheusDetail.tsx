import { useNavigate } from 'react-router';
import { errorMessage } from '@/api/errors';
import { ErrorState } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { useDeletePrometheusSource, usePrometheusSource, useTestPrometheusSource } from '../api';
import { formatDateTime } from '../form';
import { PrometheusBackfillPanel } from './BackfillPanels';
import { HealthBadge } from './HealthBadge';
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
    return (
      <ErrorState
        title="Could not load the Prometheus source"
        message={errorMessage(source.error)}
        onRetry={() => void source.refetch()}
      />
    );
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
          <dt>Authentication</dt>
          <dd>
            {AUTH_LABEL[s.auth_kind]}
            {s.username && ` as ${s.username}`}
            {s.has_secret && <span className="muted"> (secret stored, hidden)</span>}
          </dd>
          <dt>Created</dt>
          <dd>{formatDateTime(s.created_at)}</dd>
          <dt>Health</dt>
          <dd>
            <HealthBadge health={s.health} />
          </dd>
        </dl>
      </section>
      <section className="settings-section" aria-labelledby="test-heading">
        <div className="settings-section__header">
          <h2 id="test-heading">Test connection</h2>
          {canManage && (
            <button type="button" className="button button--primary" disabled={test.isPending} onClick={() => test.mutate()}>
              {test.isPending ? 'Testing…' : 'Test connection'}
            </button>
          )}
        </div>
        <p className="muted">Checks the server answers, the credentials work and TiKV series exist under the selector.</p>
        {test.isError && <ErrorState title="The test could not run" message={errorMessage(test.error)} />}
        {test.data && <PrometheusTestResult report={test.data} />}
      </section>
      <section className="settings-section" aria-labelledby="backfill-heading">
        <h2 id="backfill-heading">History import</h2>
        <PrometheusBackfillPanel sourceId={sourceId} canManage={canManage} />
      </section>
      {canManage && (
        <section className="settings-section" aria-labelledby="danger-heading">
          <h2 id="danger-heading">Remove</h2>
          {remove.isError && <p className="field__error" role="alert">{errorMessage(remove.error)}</p>}
          <button
            type="button"
            className="button button--secondary"
            disabled={remove.isPending}
            onClick={() => {
              if (!window.confirm(`Remove the Prometheus source "${s.name}"?`)) return;
              remove.mutate(s.id, { onSuccess: () => void navigate('/settings/sources') });
            }}
          >
            Remove source
          </button>
        </section>
      )}
    </>
  );
}
