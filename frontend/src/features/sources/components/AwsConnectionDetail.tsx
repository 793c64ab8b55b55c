import { useNavigate } from 'react-router';
import { errorMessage } from '@/api/errors';
import { ErrorState } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { useAwsConnection, useDeleteAwsConnection, useTestAwsConnection } from '../api';
import { formatDateTime } from '../form';
import { AwsTestResult } from './AwsTestResult';
import { AwsBackfillPanel } from './BackfillPanels';
import { HealthBadge } from './HealthBadge';
import { SweepsTable } from './SweepsTable';

const AUTH_LABEL = { assume_role: 'IAM role', static_keys: 'Access keys', default_chain: 'Default credential chain' };

/** One AWS connection: its settings and health, the permission test, the history import and the sweeps. */
export function AwsConnectionDetail({ connectionId, canManage }: { connectionId: string; canManage: boolean }) {
  const connection = useAwsConnection(connectionId);
  const test = useTestAwsConnection(connectionId);
  const remove = useDeleteAwsConnection();
  const navigate = useNavigate();

  if (connection.isPending) return <LoadingState label="Loading the AWS connection…" />;
  if (connection.isError) {
    return (
      <ErrorState
        title="Could not load the AWS connection"
        message={errorMessage(connection.error)}
        onRetry={() => void connection.refetch()}
      />
    );
  }
  const c = connection.data;
  return (
    <>
      <div className="page__header">
        <h1>{c.name}</h1>
        <p className="page__lead">AWS connection · {AUTH_LABEL[c.auth_kind]}</p>
      </div>
      <section className="settings-section" aria-labelledby="conn-heading">
        <h2 id="conn-heading">Connection</h2>
        <dl className="facts">
          {c.role_arn && (
            <>
              <dt>Role ARN</dt>
              <dd>
                <code>{c.role_arn}</code>
              </dd>
            </>
          )}
          {c.access_key_id && (
            <>
              <dt>Access key ID</dt>
              <dd>
                <code>{c.access_key_id}</code> {c.has_secret && <span className="muted">(secret stored, hidden)</span>}
              </dd>
            </>
          )}
          <dt>External ID</dt>
          <dd>
            <code>{c.external_id}</code>
          </dd>
          <dt>Regions</dt>
          <dd>{c.regions.join(', ')}</dd>
          <dt>Created</dt>
          <dd>{formatDateTime(c.created_at)}</dd>
          <dt>Health</dt>
          <dd>
            <HealthBadge health={c.health} />
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
        <p className="muted">Calls each API Headroom needs once and reports, per IAM action, whether it is allowed.</p>
        {test.isError && <ErrorState title="The test could not run" message={errorMessage(test.error)} />}
        {test.data && <AwsTestResult report={test.data} />}
      </section>
      <section className="settings-section" aria-labelledby="backfill-heading">
        <h2 id="backfill-heading">History import</h2>
        <AwsBackfillPanel connectionId={connectionId} canManage={canManage} />
      </section>
      <section className="settings-section" aria-labelledby="sweeps-heading">
        <h2 id="sweeps-heading">Sweeps and CloudWatch cost</h2>
        <SweepsTable connectionId={connectionId} />
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
              if (!window.confirm(`Remove the AWS connection "${c.name}"?`)) return;
              remove.mutate(c.id, { onSuccess: () => void navigate('/settings/sources') });
            }}
          >
            Remove connection
          </button>
        </section>
      )}
    </>
  );
}
