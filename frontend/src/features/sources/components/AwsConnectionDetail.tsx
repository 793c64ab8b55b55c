import { useNavigate } from 'react-router';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { formatTimestamp } from '@/lib/format';
import { useAwsConnection, useDeleteAwsConnection, useTestAwsConnection, type AwsTestReport } from '../api';
import { AwsTestResult } from './AwsTestResult';
import { AwsBackfillPanel } from './BackfillPanels';
import { HealthBadge } from './HealthBadge';
import { RemoveSection, TestConnectionSection } from './SourceSections';
import { SweepsTable } from './SweepsTable';

const AUTH_LABEL = { assume_role: 'IAM role', static_keys: 'Access keys', default_chain: 'Default credential chain' };

/** What a demo source is, on its page: simulated data, never AWS. */
function DemoNote() {
  return (
    <p className="demo-note" role="note">
      <span className="demo-badge">Demo</span> This source is simulated: it shows what a healthy AWS connection looks
      like (permission checks, sweeps and their CloudWatch cost, the history import), but nothing here is asked of AWS.
      Its numbers are what the collector would make and pay for the demo fleet. Connect your own account from Data
      sources.
    </p>
  );
}

/**
 * One AWS connection: its settings and health, the permission test, the history import and the sweeps.
 * `savedTest`: the test run as the connection was saved (shown until a new one is run).
 */
export function AwsConnectionDetail({
  connectionId,
  canManage,
  savedTest,
}: {
  connectionId: string;
  canManage: boolean;
  savedTest?: AwsTestReport | null;
}) {
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
        <p className="page__lead">
          AWS connection · {c.is_demo ? 'demo (simulated)' : AUTH_LABEL[c.auth_kind]}
        </p>
      </div>
      {c.is_demo && <DemoNote />}
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
        {test.data ? (
          <AwsTestResult report={test.data} />
        ) : savedTest ? (
          <>
            <h3>Tested when saved</h3>
            <AwsTestResult report={savedTest} />
          </>
        ) : null}
      </TestConnectionSection>
      <section className="settings-section" aria-labelledby="backfill-heading">
        <h2 id="backfill-heading">History import</h2>
        <AwsBackfillPanel connectionId={connectionId} canManage={canManage && !c.is_demo} />
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
