import { screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import type { components } from '@/api/schema';
import { routes } from '@/router';
import { apiError, renderRoutes, SESSION } from '@/test/render';
import { apiUrl, server } from '@/test/server';
import { PROM_BACKFILL_NONE, PROM_ID, PROM_SOURCE } from './settings-fixtures';

function signedIn() {
  server.use(
    http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
    http.get(apiUrl(`/sources/prometheus/${PROM_ID}`), () => HttpResponse.json(PROM_SOURCE)),
    http.get(apiUrl(`/sources/prometheus/${PROM_ID}/backfill`), () => HttpResponse.json(PROM_BACKFILL_NONE)),
  );
}

type SourceHealth = components['schemas']['SourceHealth'];

const METRICS = [
  'tikv_engine_size_bytes',
  'tikv_raftstore_apply_log_duration_seconds_bucket',
  'node_disk_io_time_seconds_total',
];

describe('Settings › Prometheus source', () => {
  it('reports an unreachable Prometheus with the reason', async () => {
    signedIn();
    server.use(
      http.post(apiUrl(`/sources/prometheus/${PROM_ID}/test`), () =>
        HttpResponse.json({
          ok: false,
          reachable: false,
          prometheus_api: null,
          authenticated: false,
          prometheus_version: null,
          flavour: null,
          selector: PROM_SOURCE.label_selector,
          tikv_instances: [],
          tikv_targets_up: 0,
          tikv_targets_down: 0,
          node_exporter_hosts: 0,
          metrics: [],
          missing_metrics: [],
          messages: ['Could not connect to 127.0.0.1:9: the connection was refused. Check the URL and that the service is running.'],
        }),
      ),
    );
    const { user } = renderRoutes(routes, `/settings/sources/prometheus/${PROM_ID}`);
    expect(await screen.findByRole('heading', { name: 'prod-prometheus', level: 1 })).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Test connection' }));
    const result = await screen.findByRole('region', { name: 'Test result' });
    expect(within(result).getByText('Prometheus is not reachable.')).toBeInTheDocument();
    expect(within(within(result).getByRole('list', { name: 'Messages' })).getByText(
      'Could not connect to 127.0.0.1:9: the connection was refused. Check the URL and that the service is running.',
    )).toBeInTheDocument();
  });

  it('says an address that is not Prometheus is not, and nothing about credentials or metrics', async () => {
    signedIn();
    const said =
      "This address answers, but not as Prometheus's HTTP API (got an HTML page at /api/v1/status/buildinfo); " +
      'check the URL: it should be the Prometheus base URL, e.g. http://prometheus:9090';
    server.use(
      http.post(apiUrl(`/sources/prometheus/${PROM_ID}/test`), () =>
        HttpResponse.json({
          ok: false, reachable: true, prometheus_api: false, authenticated: false, prometheus_version: null,
          flavour: null, selector: PROM_SOURCE.label_selector, tikv_instances: [], tikv_targets_up: 0,
          tikv_targets_down: 0, node_exporter_hosts: 0, metrics: [], missing_metrics: [], messages: [said],
        }),
      ),
    );
    const { user } = renderRoutes(routes, `/settings/sources/prometheus/${PROM_ID}`);
    await user.click(await screen.findByRole('button', { name: 'Test connection' }));
    const result = await screen.findByRole('region', { name: 'Test result' });
    expect(within(result).getByText(said)).toBeInTheDocument();
    expect(result).not.toHaveTextContent(/Authenticated|Reachable|TiKV|metrics/i);
    expect(within(result).queryByRole('list', { name: 'Messages' })).toBeNull();
  });

  it('never leaves an empty message line', async () => {
    signedIn();
    server.use(
      http.post(apiUrl(`/sources/prometheus/${PROM_ID}/test`), () =>
        HttpResponse.json({
          ok: false, reachable: true, prometheus_api: true, authenticated: true, prometheus_version: '3.1.0',
          flavour: null, selector: PROM_SOURCE.label_selector, tikv_instances: [], tikv_targets_up: 0,
          tikv_targets_down: 0, node_exporter_hosts: 0, metrics: [], missing_metrics: [],
          messages: ['', 'Prometheus refused the query (bad_data): parse error'],
        }),
      ),
    );
    const { user } = renderRoutes(routes, `/settings/sources/prometheus/${PROM_ID}`);
    await user.click(await screen.findByRole('button', { name: 'Test connection' }));
    const result = await screen.findByRole('region', { name: 'Test result' });
    expect(within(result).getByText('Prometheus answered, but the test found a problem:')).toBeInTheDocument();
    const items = within(within(result).getByRole('list', { name: 'Messages' })).getAllByRole('listitem');
    expect(items.map((li) => li.textContent)).toEqual(['Prometheus refused the query (bad_data): parse error']);
  });

  it('refreshes the list after a failed test: the last check failed, with its reason', async () => {
    let health: SourceHealth = {
      status: 'unknown',
      last_success_at: null,
      last_error_at: null,
      last_error: null,
      consecutive_failures: 0,
    };
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/sources/aws'), () => HttpResponse.json([])),
      http.get(apiUrl('/sources/prometheus'), () => HttpResponse.json([{ ...PROM_SOURCE, health }])),
      http.get(apiUrl(`/sources/prometheus/${PROM_ID}`), () => HttpResponse.json({ ...PROM_SOURCE, health })),
      http.get(apiUrl(`/sources/prometheus/${PROM_ID}/backfill`), () => HttpResponse.json(PROM_BACKFILL_NONE)),
      http.post(apiUrl(`/sources/prometheus/${PROM_ID}/test`), () => {
        // One failure: the API records the error but keeps the status until 3 in a row.
        health = { ...health, last_error_at: '2026-11-21T10:00:00Z', last_error: 'Could not connect to 127.0.0.1:9: the connection was refused. Check the URL and that the service is running.', consecutive_failures: 1 };
        return HttpResponse.json({
          ok: false, reachable: false, prometheus_api: null, authenticated: false, prometheus_version: null, flavour: null,
          selector: '', tikv_instances: [], tikv_targets_up: 0, tikv_targets_down: 0, node_exporter_hosts: 0,
          metrics: [], missing_metrics: [], messages: ['Could not connect to 127.0.0.1:9: the connection was refused. Check the URL and that the service is running.'],
        });
      }),
    );
    const { user } = renderRoutes(routes, '/settings/sources');
    const row = await screen.findByRole('row', { name: /prod-prometheus/ });
    expect(within(row).getByText('Not checked yet')).toBeInTheDocument();
    await user.click(within(row).getByRole('link', { name: 'prod-prometheus' }));
    await user.click(await screen.findByRole('button', { name: 'Test connection' }));
    await screen.findByRole('region', { name: 'Test result' });
    await user.click(screen.getByRole('link', { name: '← Data sources' }));
    const after = await screen.findByRole('row', { name: /prod-prometheus/ });
    expect(await within(after).findByText('Last check failed')).toBeInTheDocument();
    expect(within(after).getByText('Could not connect to 127.0.0.1:9: the connection was refused. Check the URL and that the service is running.')).toBeInTheDocument();
  });

  it('lists the TiKV metrics found and the ones missing', async () => {
    signedIn();
    server.use(
      http.post(apiUrl(`/sources/prometheus/${PROM_ID}/test`), () =>
        HttpResponse.json({
          ok: true,
          reachable: true,
          prometheus_api: true,
          authenticated: true,
          prometheus_version: '3.1.0',
          flavour: 'operator',
          selector: PROM_SOURCE.label_selector,
          tikv_instances: ['basic-tikv-0', 'basic-tikv-1', 'basic-tikv-2'],
          tikv_targets_up: 3,
          tikv_targets_down: 0,
          node_exporter_hosts: 0,
          metrics: [
            { metric: METRICS[0], series: 3 },
            { metric: METRICS[1], series: 120 },
            { metric: METRICS[2], series: 0 },
          ],
          missing_metrics: [METRICS[2]],
          messages: ['1 metric(s) the advisor reads are missing under the selector; the advice that needs them will be skipped.'],
        }),
      ),
    );
    const { user } = renderRoutes(routes, `/settings/sources/prometheus/${PROM_ID}`);
    await user.click(await screen.findByRole('button', { name: 'Test connection' }));
    const result = await screen.findByRole('region', { name: 'Test result' });
    expect(within(result).getByText('Connected to Prometheus 3.1.0: 3 TiKV instance(s) found.')).toBeInTheDocument();
    expect(within(result).getByText('TiDB Operator')).toBeInTheDocument();
    const found = within(result).getByRole('list', { name: 'Metrics found' });
    expect(within(found).getAllByRole('listitem').map((li) => li.querySelector('code')?.textContent)).toEqual(METRICS.slice(0, 2));
    const missing = within(result).getByRole('list', { name: 'Metrics missing' });
    expect(within(missing).getByText(METRICS[2]!)).toBeInTheDocument();
  });

  it('shows the backfill state and progress in query steps', async () => {
    signedIn();
    server.use(
      http.get(apiUrl(`/sources/prometheus/${PROM_ID}/backfill`), () =>
        HttpResponse.json({
          ...PROM_BACKFILL_NONE,
          status: 'failed',
          steps_done: 300,
          steps_total: 1200,
          percent: 25,
          last_error: 'PrometheusError: unreachable',
        }),
      ),
    );
    renderRoutes(routes, `/settings/sources/prometheus/${PROM_ID}`);
    const bar = await screen.findByRole('progressbar', { name: 'Prometheus history import' });
    expect(bar).toHaveAttribute('aria-valuenow', '300');
    expect(screen.getByText('300 / 1,200 query steps (25%)')).toBeInTheDocument();
    expect(screen.getByText('Failed')).toBeInTheDocument();
    expect(screen.getByText('PrometheusError: unreachable')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Import history again' })).toBeInTheDocument();
  });
});

describe('Settings › Add Prometheus source', () => {
  it('builds the TiDB Operator selector, sends the bearer token once and opens the source', async () => {
    let body: unknown;
    signedIn();
    server.use(
      http.post(apiUrl('/sources/prometheus'), async ({ request }) => {
        body = await request.json();
        return HttpResponse.json({ ...PROM_SOURCE, auth_kind: 'bearer', has_secret: true }, { status: 201 });
      }),
    );
    const { user, router } = renderRoutes(routes, '/settings/sources/prometheus/new');
    await user.type(await screen.findByLabelText('Name'), 'prod-prometheus');
    await user.type(screen.getByLabelText('Prometheus URL'), 'http://127.0.0.1:9/');
    await user.click(screen.getByRole('radio', { name: 'Bearer token' }));
    const token = screen.getByLabelText('Token');
    expect(token).toHaveAttribute('type', 'password');
    await user.type(token, 's3cr3t-token');
    await user.click(screen.getByRole('radio', { name: /TiDB Operator/ }));
    await user.type(screen.getByLabelText('Namespace'), 'tidb');
    await user.type(screen.getByLabelText('TidbCluster name'), 'prod');
    expect(screen.getByLabelText('TidbCluster name')).toHaveAccessibleDescription('Selector: {tidb_cluster="tidb-prod"}');
    await user.type(screen.getByLabelText('Grafana URL (optional)'), 'https://grafana.example.com');
    await user.click(screen.getByRole('button', { name: 'Add Prometheus source' }));

    expect(await screen.findByRole('heading', { name: 'prod-prometheus', level: 1 })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe(`/settings/sources/prometheus/${PROM_ID}`);
    expect(body).toEqual({
      name: 'prod-prometheus',
      base_url: 'http://127.0.0.1:9/',
      label_selector: 'tidb_cluster="tidb-prod"',
      auth_kind: 'bearer',
      secret: 's3cr3t-token',
      grafana_url: 'https://grafana.example.com',
    });
    expect(document.body).not.toHaveTextContent('s3cr3t-token');
  });

  it('puts a malformed selector error from the API next to the selector field', async () => {
    signedIn();
    server.use(
      http.post(apiUrl('/sources/prometheus'), () =>
        HttpResponse.json(
          apiError('validation_error', 'expected a label matcher', [
            { field: 'label_selector', message: 'expected a label matcher at position 8' },
          ]),
          { status: 422 },
        ),
      ),
    );
    const { user } = renderRoutes(routes, '/settings/sources/prometheus/new');
    await user.type(await screen.findByLabelText('Name'), 'p');
    await user.type(screen.getByLabelText('Prometheus URL'), 'http://prometheus:9090');
    await user.type(screen.getByLabelText('Label selector (optional)'), 'cluster=');
    await user.click(screen.getByRole('button', { name: 'Add Prometheus source' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Some fields are not valid');
    expect(screen.getByLabelText('Label selector (optional)')).toHaveAccessibleDescription(
      expect.stringContaining('Expected a label matcher at position 8'),
    );
  });

  it('asks for a URL before sending anything', async () => {
    signedIn();
    let sent = false;
    server.use(http.post(apiUrl('/sources/prometheus'), () => ((sent = true), HttpResponse.json({}, { status: 201 }))));
    const { user } = renderRoutes(routes, '/settings/sources/prometheus/new');
    await user.type(await screen.findByLabelText('Name'), 'p');
    await user.type(screen.getByLabelText('Prometheus URL'), 'prometheus:9090');
    await user.click(screen.getByRole('button', { name: 'Add Prometheus source' }));
    expect(screen.getByLabelText('Prometheus URL')).toHaveAccessibleDescription(
      expect.stringContaining('Enter the Prometheus URL, like http://prometheus:9090.'),
    );
    expect(sent).toBe(false);
  });
});
