import { useNavigate } from 'react-router';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { formatTimestamp } from '@/lib/format';
import { useAwsConnection, useDeleteAwsConnection, useTestAwsConnection } from '../api';
import { AwsTestResult } from './AwsTestResult';
import { AwsBackfillPanel } from './BackfillPanels';
import { HealthBadge } from './HealthBadge';
import { RemoveSection, TestConnectionSection } from './SourceSections';
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
    return <QueryError title="Could not load the AWS connection" query={connection} />;
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
          <dd>{formatTimestamp(c.created_at)}</dd>
          <dt>Health</dt>
          <dd>
            <HealthBadge health={c.health} />
          </dd>
        </dl>
      </section>
      <TestConnectionSection
        test={test}
        onTest={() => test.mutate()}
        canManage={canManage}
        checks="Calls each API Headroom needs once and reports, per IAM action, whether it is allowed."
      >
        {test.data && <AwsTestResult report={test.data} />}
      </TestConnectionSection>
      <section className="settings-section" aria-labelledby="backfill-heading">
        <h2 id="backfill-heading">History import</h2>
        <AwsBackfillPanel connectionId={connectionId} canManage={canManage} />
      </section>
      <section className="settings-section" aria-labelledby="sweeps-heading">
        <h2 id="sweeps-heading">Sweeps and CloudWatch cost</h2>
        <SweepsTable connectionId={connectionId} />
      </section>
      {canManage && (
        <RemoveSection
          remove={remove}
          onRemove={() => remove.mutate(c.id, { onSuccess: () => void navigate('/settings/sources') })}
          confirmText={`Remove the AWS connection "${c.name}"?`}
          label="Remove connection"
        />
      )}
    </>
  );
}
