import { Link } from 'react-router';
import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { useAwsConnections, usePrometheusSources } from '../api';
import { HealthBadge } from './HealthBadge';

const AUTH_LABEL = { assume_role: 'IAM role', static_keys: 'Access keys', default_chain: 'Default chain' } as const;

function AwsSection({ canManage }: { canManage: boolean }) {
  const list = useAwsConnections();
  const connect = canManage ? (
    <Link className="button button--primary" to="/settings/sources/aws/new">
      Connect AWS account
    </Link>
  ) : undefined;
  return (
    <section className="settings-section" aria-labelledby="aws-heading">
      <div className="settings-section__header">
        <h2 id="aws-heading">AWS accounts</h2>
        {list.data && list.data.length > 0 && connect}
      </div>
      {list.isPending ? (
        <LoadingState label="Loading AWS connections…" />
      ) : list.isError ? (
        <QueryError title="Could not load AWS connections" query={list} />
      ) : list.data.length === 0 ? (
        <EmptyState title="No AWS accounts connected" headingLevel={3} action={connect}>
          <p>Headroom reads EC2 volumes, instances and their CloudWatch metrics through a read-only role.</p>
          {!canManage && <p>Ask an admin of your organisation to connect one.</p>}
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="table" aria-label="AWS connections">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Credentials</th>
                <th scope="col">Regions</th>
                <th scope="col">Health</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((c) => (
                <tr key={c.id}>
                  <th scope="row">
                    <Link to={`/settings/sources/aws/${c.id}`}>{c.name}</Link>
                  </th>
                  <td>{AUTH_LABEL[c.auth_kind]}</td>
                  <td>{c.regions.join(', ')}</td>
                  <td>
                    <HealthBadge health={c.health} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function PrometheusSection({ canManage }: { canManage: boolean }) {
  const list = usePrometheusSources();
  const add = canManage ? (
    <Link className="button button--primary" to="/settings/sources/prometheus/new">
      Add Prometheus source
    </Link>
  ) : undefined;
  return (
    <section className="settings-section" aria-labelledby="prom-heading">
      <div className="settings-section__header">
        <h2 id="prom-heading">Prometheus sources</h2>
        {list.data && list.data.length > 0 && add}
      </div>
      {list.isPending ? (
        <LoadingState label="Loading Prometheus sources…" />
      ) : list.isError ? (
        <QueryError title="Could not load Prometheus sources" query={list} />
      ) : list.data.length === 0 ? (
        <EmptyState title="No Prometheus sources" headingLevel={3} action={add}>
          <p>Headroom reads TiKV and node_exporter metrics from the Prometheus that scrapes your cluster.</p>
          {!canManage && <p>Ask an admin of your organisation to add one.</p>}
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="table" aria-label="Prometheus sources">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">URL</th>
                <th scope="col">Selector</th>
                <th scope="col">Health</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((s) => (
                <tr key={s.id}>
                  <th scope="row">
                    <Link to={`/settings/sources/prometheus/${s.id}`}>{s.name}</Link>
                  </th>
                  <td>
                    <code>{s.base_url}</code>
                  </td>
                  <td>{s.label_selector ? <code>{`{${s.label_selector}}`}</code> : <span className="muted">none</span>}</td>
                  <td>
                    <HealthBadge health={s.health} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** Every data source of the organisation with its health. */
export function SourcesOverview({ canManage }: { canManage: boolean }) {
  return (
    <>
      <AwsSection canManage={canManage} />
      <PrometheusSection canManage={canManage} />
    </>
  );
}
