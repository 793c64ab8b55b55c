import { http, HttpResponse } from 'msw';
import { Outlet, type RouteObject } from 'react-router';
import { describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import { NODE_B, nodeMetrics, overview } from '@/features/metrics/fixtures';
import { routes as appRoutes } from '@/router';
import { apiError, renderRoutes } from '@/test/render';
import { apiUrl, server } from '@/test/server';
import ClusterMetricsPage from './cluster-metrics';
import type { ClusterContext } from './cluster-layout';

const CLUSTER_ID = 'c0000000-0000-4000-8000-000000000000';
const context = { cluster: { id: CLUSTER_ID, name: 'prod' }, canManage: true } as unknown as ClusterContext;

// The page under a stand-in for the cluster layout (which owns the tabs and loads the cluster).
const routes: RouteObject[] = [
  { path: '/clusters/:clusterId', element: <Outlet context={context} />, children: [{ path: 'metrics', element: <ClusterMetricsPage /> }] },
];

function serve(metrics = nodeMetrics(), seen: URL[] = []) {
  server.use(
    http.get(apiUrl(`/clusters/${CLUSTER_ID}/metrics`), ({ request }) => {
      seen.push(new URL(request.url));
      return HttpResponse.json(metrics);
    }),
    http.get(apiUrl(`/clusters/${CLUSTER_ID}/metrics/overview`), () => HttpResponse.json(overview())),
  );
  return seen;
}

describe('cluster metrics page', () => {
  it('is the Metrics tab of the cluster layout', () => {
    const app = appRoutes.find((r) => r.children?.some((c) => c.path === '/clusters/:clusterId'));
    const cluster = app?.children?.find((c) => c.path === '/clusters/:clusterId');
    expect(cluster?.children?.some((c) => c.path === 'metrics')).toBe(true);
  });

  it('shows the charts with their ceilings and sources, the forecast, and the heat map', async () => {
    serve();
    renderRoutes(routes, `/clusters/${CLUSTER_ID}/metrics`);
    expect(screen.getAllByRole('status').length).toBeGreaterThan(0);
    const chart = await screen.findByRole('figure', { name: 'Data volume IOPS (vol-0aaaa, gp3 500 GiB)' });
    const legend = within(chart).getByRole('list', { name: /legend/ });
    expect(legend).toHaveTextContent('gp3 provisioned IOPS: 6,000 IOPS (source: gp3 500 GiB: docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025)');
    // the plot is an image named after what it draws and its limit (charts have accessible names)
    expect(
      within(chart).getByRole('img', { name: /^Data volume IOPS \(vol-0aaaa, gp3 500 GiB\), in IOPS: lines for .*gp3 provisioned IOPS at 6,000 IOPS \(source: gp3 500 GiB: docs\/reference\/ebs-volume-types\.md#gp3-limits-raised-in-2025\)/ }),
    ).toBeInTheDocument();
    expect(legend).toHaveTextContent('gp2 burst IOPS (limit in force)');
    // The first panel is drawn alone; the others follow once it has been painted.
    expect(await screen.findByRole('list', { name: 'Burst balances: notes' })).toHaveTextContent(
      'empties in 18 min (between 15 min and 22 min) at 3,000 IOPS; then 1,050 IOPS / 128 MiB/s.',
    );
    expect(screen.getByText(/raw 1-minute points/)).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Download Prometheus alert rules' })).toHaveAttribute(
      'href',
      `/api/v1/clusters/${CLUSTER_ID}/alert-rules`,
    );
    const table = screen.getByRole('table', { name: 'Peak use of each ceiling per node' });
    const rows = within(table).getAllByRole('row');
    expect(rows[1]).toHaveTextContent('10.0.1.5:20160');
    expect(within(rows[1]!).getByText('90%')).toHaveClass('heat--critical');
    expect(rows[1]).toHaveTextContent('18 min');
    expect(rows[2]).toHaveTextContent('20%');
  });

  it('asks for the chosen range and node', async () => {
    const seen = serve();
    const { user, router } = renderRoutes(routes, `/clusters/${CLUSTER_ID}/metrics`);
    await screen.findByRole('figure', { name: /Data volume IOPS/ });
    await user.click(screen.getByRole('radio', { name: '7 days' }));
    await waitFor(() => expect(seen.length).toBe(2));
    const week = seen[1]!;
    const span = Date.parse(week.searchParams.get('end')!) - Date.parse(week.searchParams.get('start')!);
    expect(span).toBe(7 * 86400 * 1000);
    // jsdom lays nothing out (width 0): the fewest points the API takes; a browser asks for its charts' width.
    expect(week.searchParams.get('points')).toBe('16');
    expect(router.state.location.search).toBe('?range=7d');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Node' }), NODE_B);
    await waitFor(() => expect(seen.at(-1)?.searchParams.get('node_id')).toBe(NODE_B));
    expect(router.state.location.search).toBe(`?node=${NODE_B}&range=7d`);
  });

  it('says so when the cluster has no node yet', async () => {
    serve(nodeMetrics({ node: null, panels: [] }));
    server.use(
      http.get(apiUrl(`/clusters/${CLUSTER_ID}/metrics/overview`), () =>
        HttpResponse.json({ ...overview(), nodes: [] }),
      ),
    );
    renderRoutes(routes, `/clusters/${CLUSTER_ID}/metrics`);
    expect(await screen.findByRole('region', { name: 'No TiKV nodes yet' })).toBeInTheDocument();
  });

  it('shows the API error and retries', async () => {
    let calls = 0;
    server.use(
      http.get(apiUrl(`/clusters/${CLUSTER_ID}/metrics`), () => {
        calls += 1;
        return HttpResponse.json(apiError('validation_error', 'start: must be before end'), { status: 422 });
      }),
      http.get(apiUrl(`/clusters/${CLUSTER_ID}/metrics/overview`), () => HttpResponse.json(overview())),
    );
    const { user } = renderRoutes(routes, `/clusters/${CLUSTER_ID}/metrics`);
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load metrics');
    expect(alert).toHaveTextContent('start: must be before end');
    await user.click(within(alert).getByRole('button', { name: 'Try again' }));
    await waitFor(() => expect(calls).toBe(2));
  });
});
