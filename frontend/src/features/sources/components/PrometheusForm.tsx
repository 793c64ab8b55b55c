import { useState, type FormEvent } from 'react';
import { errorMessage, fieldErrorsOf } from '@/api/errors';
import { TextField } from '@/components/TextField';
import { useCreatePrometheusSource, type PrometheusSource, type PrometheusSourceCreate } from '../api';

type AuthKind = NonNullable<PrometheusSourceCreate['auth_kind']>;
type Style = 'tiup' | 'operator';

/**
 * TiDB Operator (TidbMonitor) labels every series tidb_cluster="<namespace>-<cluster>"
 * (pingcap/tidb-operator pkg/monitor/monitor/util.go, as cited in backend/headroom/sources/prometheus/promql.py).
 */
export function operatorSelector(namespace: string, cluster: string): string {
  return `tidb_cluster="${namespace.trim()}-${cluster.trim()}"`;
}

/** Add a Prometheus source: URL, authentication and how its TiKV series are labelled. */
export function PrometheusForm({ onCreated }: { onCreated: (source: PrometheusSource) => void }) {
  const create = useCreatePrometheusSource();
  const [name, setName] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const [authKind, setAuthKind] = useState<AuthKind>('none');
  const [username, setUsername] = useState('');
  const [secret, setSecret] = useState('');
  const [style, setStyle] = useState<Style>('tiup');
  const [selector, setSelector] = useState('');
  const [namespace, setNamespace] = useState('');
  const [cluster, setCluster] = useState('');
  const [grafanaUrl, setGrafanaUrl] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const server = fieldErrorsOf(create.error);
  const fieldError = (field: string) => errors[field] ?? server[field];
  const labelSelector = style === 'operator' ? (namespace && cluster ? operatorSelector(namespace, cluster) : '') : selector.trim();

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const found: Record<string, string> = {};
    if (!name.trim()) found.name = 'Give the source a name.';
    if (!/^https?:\/\/\S+$/.test(baseUrl.trim())) found.base_url = 'Enter the Prometheus URL, like http://prometheus:9090.';
    if (authKind === 'basic' && !username.trim()) found.username = 'Enter the user name.';
    if (authKind !== 'none' && !secret) found.secret = authKind === 'bearer' ? 'Enter the token.' : 'Enter the password.';
    if (grafanaUrl.trim() && !/^https?:\/\/\S+$/.test(grafanaUrl.trim()))
      found.grafana_url = 'Enter the Grafana URL, like https://grafana.example.com, or leave it empty.';
    if (style === 'operator') {
      if (!namespace.trim()) found.namespace = 'Enter the Kubernetes namespace of the TidbCluster.';
      if (!cluster.trim()) found.cluster = 'Enter the TidbCluster name.';
    }
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    const body: PrometheusSourceCreate = {
      name: name.trim(),
      base_url: baseUrl.trim(),
      label_selector: labelSelector,
      auth_kind: authKind,
    };
    if (grafanaUrl.trim()) body.grafana_url = grafanaUrl.trim();
    if (authKind === 'basic') body.username = username.trim();
    if (authKind !== 'none') body.secret = secret;
    create.mutate(body, {
      onSuccess: (source) => {
        setSecret('');
        onCreated(source);
      },
    });
  };

  const hasFieldErrors = Object.keys(server).length > 0;
  return (
    <form className="form" onSubmit={onSubmit} noValidate aria-label="Add Prometheus source">
      {create.error && (
        <div className="form-error" role="alert">
          {hasFieldErrors ? 'Some fields are not valid; see the messages below.' : errorMessage(create.error)}
        </div>
      )}
      <TextField label="Name" name="name" required value={name} onChange={(e) => setName(e.target.value)} error={fieldError('name')} />
      <TextField
        label="Prometheus URL"
        name="base_url"
        type="url"
        required
        placeholder="http://prometheus.monitoring:9090"
        hint="The address Headroom's server can reach; it must answer the Prometheus HTTP API."
        value={baseUrl}
        onChange={(e) => setBaseUrl(e.target.value)}
        error={fieldError('base_url')}
      />
      <fieldset className="field">
        <legend className="field__label">Authentication</legend>
        {(
          [
            ['none', 'None'],
            ['bearer', 'Bearer token'],
            ['basic', 'Basic auth'],
          ] as const
        ).map(([value, label]) => (
          <label key={value} className="radio">
            <input type="radio" name="auth_kind" value={value} checked={authKind === value} onChange={() => setAuthKind(value)} />
            <span>{label}</span>
          </label>
        ))}
      </fieldset>
      {authKind === 'basic' && (
        <TextField
          label="User name"
          name="username"
          autoComplete="off"
          value={username}
          onChange={(e) => setUsername(e.target.value)}
          error={fieldError('username')}
        />
      )}
      {authKind !== 'none' && (
        <TextField
          label={authKind === 'bearer' ? 'Token' : 'Password'}
          name="secret"
          type="password"
          autoComplete="new-password"
          hint="Stored encrypted and never shown again."
          value={secret}
          onChange={(e) => setSecret(e.target.value)}
          error={fieldError('secret')}
        />
      )}
      <fieldset className="field">
        <legend className="field__label">How the cluster is deployed</legend>
        <label className="radio">
          <input type="radio" name="style" value="tiup" checked={style === 'tiup'} onChange={() => setStyle('tiup')} />
          <span>
            TiUP <span className="muted">— TiKV targets are job=&quot;tikv&quot;, instance=host:port</span>
          </span>
        </label>
        <label className="radio">
          <input
            type="radio"
            name="style"
            value="operator"
            checked={style === 'operator'}
            onChange={() => setStyle('operator')}
          />
          <span>
            TiDB Operator <span className="muted">— component=&quot;tikv&quot;, labelled tidb_cluster=&quot;&lt;namespace&gt;-&lt;cluster&gt;&quot;</span>
          </span>
        </label>
      </fieldset>
      {style === 'tiup' ? (
        <TextField
          label="Label selector (optional)"
          name="label_selector"
          placeholder='tidb_cluster="prod"'
          hint="Matchers that pick one TiDB cluster when this Prometheus scrapes several; leave empty otherwise."
          value={selector}
          onChange={(e) => setSelector(e.target.value)}
          error={fieldError('label_selector')}
        />
      ) : (
        <>
          <TextField
            label="Namespace"
            name="namespace"
            value={namespace}
            onChange={(e) => setNamespace(e.target.value)}
            error={fieldError('namespace')}
          />
          <TextField
            label="TidbCluster name"
            name="cluster"
            value={cluster}
            onChange={(e) => setCluster(e.target.value)}
            error={fieldError('cluster') ?? fieldError('label_selector')}
            hint={labelSelector ? `Selector: {${labelSelector}}` : undefined}
          />
        </>
      )}
      <TextField
        label="Grafana URL (optional)"
        name="grafana_url"
        type="url"
        placeholder="https://grafana.example.com"
        hint="The Grafana that shows this cluster's TiKV dashboards: each node links to its TiKV-Details dashboard there. Only your browser opens it."
        value={grafanaUrl}
        onChange={(e) => setGrafanaUrl(e.target.value)}
        error={fieldError('grafana_url')}
      />
      <button type="submit" className="button button--primary" disabled={create.isPending}>
        {create.isPending ? 'Adding…' : 'Add Prometheus source'}
      </button>
    </form>
  );
}
