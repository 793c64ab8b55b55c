import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { ScrollRegion } from '@/components/ScrollRegion';
import { useAwsConnections, usePrometheusSources } from '../api';
import { HealthBadge } from './HealthBadge';

const AUTH_LABEL = { assume_role: 'IAM role', static_keys: 'Access keys', default_chain: 'Default chain' } as const;

interface ListQuery<T> {
  isPending: boolean;
  isError: boolean;
  error: unknown;
  data: T[] | undefined;
  refetch: () => unknown;
}

/** One kind of source: its table, or loading, error and empty states; the add link once there is one. */
function SourceSection<T extends { id: string }>({
  id,
  title,
  noun,
  add,
  list,
  empty,
  canManage,
  columns,
  row,
}: {
  id: string;
  title: string;
  noun: string;
  add: ReactNode;
  list: ListQuery<T>;
  empty: { title: string; text: string; askAdmin: string };
  canManage: boolean;
  columns: string[];
  row: (item: T) => ReactNode;
}) {
  const items = list.data;
  return (
    <section className="settings-section" aria-labelledby={id}>
      <div className="settings-section__header">
        <h2 id={id}>{title}</h2>
        {items && items.length > 0 && add}
      </div>
      {list.isPending ? (
        <LoadingState label={`Loading ${noun}…`} />
      ) : list.isError || !items ? (
        <QueryError title={`Could not load ${noun}`} query={list} />
      ) : items.length === 0 ? (
        <EmptyState title={empty.title} headingLevel={3} action={add}>
          <p>{empty.text}</p>
          {!canManage && <p>{empty.askAdmin}</p>}
        </EmptyState>
      ) : (
        <ScrollRegion label={`${noun} table`}>
          <table className="table" aria-label={noun}>
            <thead>
              <tr>
                {columns.map((c) => (
                  <th key={c} scope="col">
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>{items.map(row)}</tbody>
          </table>
        </ScrollRegion>
      )}
    </section>
  );
}

function AwsSection({ canManage }: { canManage: boolean }) {
  const list = useAwsConnections();
  const connect = canManage ? (
    <Link className="button button--primary" to="/settings/sources/aws/new">
      Connect AWS account
    </Link>
  ) : undefined;
  return (
    <SourceSection
      id="aws-heading"
      title="AWS accounts"
      noun="AWS connections"
      add={connect}
      list={list}
      canManage={canManage}
      empty={{
        title: 'No AWS accounts connected',
        text: 'Headroom reads EC2 volumes, instances and their CloudWatch metrics through a read-only role.',
        askAdmin: 'Ask an admin of your organisation to connect one.',
      }}
      columns={['Name', 'Credentials', 'Regions', 'Health']}
      row={(c) => (
        <tr key={c.id}>
          <th scope="row">
            <Link to={`/settings/sources/aws/${c.id}`}>{c.name}</Link>
            {c.is_demo && (
              <>
                {' '}
                <span className="demo-badge" title="Simulated: nothing of this source reaches AWS">
                  Demo
                </span>
              </>
            )}
          </th>
          <td>{c.is_demo ? 'Simulated (demo)' : AUTH_LABEL[c.auth_kind]}</td>
          <td>{c.regions.join(', ')}</td>
          <td>
            <HealthBadge health={c.health} />
          </td>
        </tr>
      )}
    />
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
    <SourceSection
      id="prom-heading"
      title="Prometheus sources"
      noun="Prometheus sources"
      add={add}
      list={list}
      canManage={canManage}
      empty={{
        title: 'No Prometheus sources',
        text: 'Headroom reads TiKV and node_exporter metrics from the Prometheus that scrapes your cluster.',
        askAdmin: 'Ask an admin of your organisation to add one.',
      }}
      columns={['Name', 'URL', 'Selector', 'Health']}
      row={(s) => (
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
      )}
    />
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
