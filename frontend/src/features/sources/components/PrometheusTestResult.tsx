import type { PrometheusTestReport } from '../api';

const FLAVOUR = { tiup: 'TiUP', operator: 'TiDB Operator' } as const;

/** What the Prometheus test found: reachability, auth, TiKV targets and which advisor metrics are missing. */
export function PrometheusTestResult({ report }: { report: PrometheusTestReport }) {
  const found = report.metrics.filter((m) => m.series > 0);
  const messages = report.messages.filter((m) => m.trim() !== '');
  // Until the address answers as Prometheus's HTTP API nothing is known about credentials or metrics: the one
  // thing to say is what answered instead, and what URL to give.
  const notPrometheus = report.prometheus_api === false;
  const summary = report.ok
    ? `Connected${report.prometheus_version ? ` to Prometheus ${report.prometheus_version}` : ''}: ${report.tikv_instances.length} TiKV instance(s) found.`
    : !report.reachable
      ? 'Prometheus is not reachable.'
      : notPrometheus
        ? (messages[0] ?? "This address answers, but not as Prometheus's HTTP API; check the URL.")
        : !report.authenticated
          ? 'Prometheus refused the credentials.'
          : 'Prometheus answered, but the test found a problem:';
  const rest = notPrometheus ? messages.slice(1) : messages;
  return (
    <div className="test-result" role="region" aria-label="Test result">
      <p className={report.ok ? 'test-result__summary test-result__summary--ok' : 'test-result__summary test-result__summary--fail'}>
        {summary}
      </p>
      {rest.length > 0 && (
        <ul className="test-result__messages" aria-label="Messages">
          {rest.map((m) => (
            <li key={m}>{m}</li>
          ))}
        </ul>
      )}
      {!notPrometheus && (
        <>
          <dl className="facts">
            <dt>Reachable</dt>
            <dd>{report.reachable ? 'Yes' : 'No'}</dd>
            <dt>Authenticated</dt>
            <dd>{report.prometheus_api === true ? 'Yes' : report.reachable ? 'No' : 'Not known'}</dd>
            <dt>Deployment</dt>
            <dd>{report.flavour ? FLAVOUR[report.flavour] : '—'}</dd>
            <dt>TiKV targets</dt>
            <dd>
              {report.tikv_targets_up} up, {report.tikv_targets_down} down
            </dd>
            <dt>node_exporter hosts</dt>
            <dd>{report.node_exporter_hosts}</dd>
          </dl>
          {report.metrics.length > 0 && (
            <>
              <h3>Metrics found ({found.length})</h3>
              <ul className="metric-list" aria-label="Metrics found">
                {found.map((m) => (
                  <li key={m.metric}>
                    <code>{m.metric}</code> <span className="muted">{m.series} series</span>
                  </li>
                ))}
              </ul>
              <h3>Metrics missing ({report.missing_metrics.length})</h3>
              {report.missing_metrics.length === 0 ? (
                <p>None: every metric the advisor reads is present.</p>
              ) : (
                <ul className="metric-list" aria-label="Metrics missing">
                  {report.missing_metrics.map((m) => (
                    <li key={m}>
                      <code>{m}</code>
                    </li>
                  ))}
                </ul>
              )}
            </>
          )}
        </>
      )}
    </div>
  );
}
