import { screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { routes } from '@/router';
import { apiError, renderRoutes } from '@/test/render';
import { apiUrl, server } from '@/test/server';
import { CACHE_SUMMARY, CLUSTER_ID, clusterHandlers, GP2_FINDING, GP2_SUMMARY } from '@/test/cluster-fixtures';

describe('cluster findings list', () => {
  it('lists findings with severity, rule, state and confidence, linking to each', async () => {
    server.use(...clusterHandlers());
    renderRoutes(routes, `/clusters/${CLUSTER_ID}/findings`);
    const table = await screen.findByRole('table', { name: 'Findings' });
    const row = within(table).getByRole('row', { name: /BurstBalance fell to 0%/ });
    expect(within(row).getByText('Critical')).toBeInTheDocument();
    expect(within(row).getByRole('cell', { name: 'gp2-burst-depletion' })).toBeInTheDocument();
    expect(within(row).getByRole('cell', { name: 'Open' })).toBeInTheDocument();
    expect(within(row).getByRole('cell', { name: '85%' })).toBeInTheDocument();
    expect(within(row).getByRole('link')).toHaveAttribute('href', `/clusters/${CLUSTER_ID}/findings/${GP2_FINDING}`);
    expect(screen.getByText('2 findings')).toBeInTheDocument();
  });

  it('filters by severity, state and rule through the API and the address', async () => {
    const queries: string[] = [];
    server.use(...clusterHandlers());
    server.use(
      http.get(apiUrl(`/clusters/${CLUSTER_ID}/findings`), ({ request }) => {
        queries.push(new URL(request.url).search);
      }),
    );
    const { user, router } = renderRoutes(routes, `/clusters/${CLUSTER_ID}/findings`);
    await screen.findByRole('table', { name: 'Findings' });
    // by default: what needs attention (open and acknowledged), the address stays clean
    expect(screen.getByRole('checkbox', { name: 'Open' })).toBeChecked();
    expect(screen.getByRole('checkbox', { name: 'Snoozed' })).not.toBeChecked();

    await user.click(screen.getByRole('checkbox', { name: 'Critical' }));
    expect(await screen.findByText('1 finding')).toBeInTheDocument();
    expect(within(screen.getByRole('table', { name: 'Findings' })).queryByText(/block cache/)).not.toBeInTheDocument();
    expect(router.state.location.search).toBe('?severity=critical');
    // one request, the whole list, filtered in the page: its rules, its hidden count and the list agree
    expect(new Set(queries)).toEqual(new Set(['']));

    await user.click(screen.getByRole('checkbox', { name: 'Open' }));
    await user.click(screen.getByRole('checkbox', { name: 'Acknowledged' }));
    await user.click(screen.getByRole('checkbox', { name: 'Resolved' }));
    expect(await screen.findByRole('region', { name: 'No findings match these filters' })).toBeInTheDocument();
    expect(router.state.location.search).toBe('?status=resolved&severity=critical');

    await user.click(screen.getByRole('button', { name: 'Clear filters' }));
    expect(await screen.findByText('2 findings')).toBeInTheDocument();
    expect(router.state.location.search).toBe('?status=all');

    await user.selectOptions(screen.getByLabelText('Rule'), 'block-cache-size');
    expect(await screen.findByText('1 finding')).toBeInTheDocument();
    expect(router.state.location.search).toBe('?status=all&rule=block-cache-size');
  });

  it('leaves snoozed and resolved findings out of the default list, a click away', async () => {
    server.use(...clusterHandlers({ findings: [GP2_SUMMARY, { ...CACHE_SUMMARY, status: 'snoozed' }] }));
    const { user } = renderRoutes(routes, `/clusters/${CLUSTER_ID}/findings`);
    expect(await screen.findByText('1 finding open; 1 snoozed or resolved not shown (tick them under State)')).toBeInTheDocument();
    expect(within(screen.getByRole('table', { name: 'Findings' })).queryByText(/block cache/)).not.toBeInTheDocument();
    await user.click(screen.getByRole('checkbox', { name: 'Snoozed' }));
    expect(await screen.findByText('2 findings')).toBeInTheDocument();
  });

  it('says when nothing is open, and shows the rest on request', async () => {
    server.use(
      ...clusterHandlers({ findings: [{ ...GP2_SUMMARY, status: 'resolved' }, { ...CACHE_SUMMARY, status: 'snoozed' }] }),
    );
    const { user, router } = renderRoutes(routes, `/clusters/${CLUSTER_ID}/findings`);
    expect(await screen.findByRole('region', { name: 'No open findings' })).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Show 2 snoozed or resolved' }));
    expect(await screen.findByText('2 findings')).toBeInTheDocument();
    expect(router.state.location.search).toBe('?status=all');
  });

  it('reads filters from the address', async () => {
    server.use(...clusterHandlers());
    renderRoutes(routes, `/clusters/${CLUSTER_ID}/findings?severity=warning`);
    expect(await screen.findByText('1 finding')).toBeInTheDocument();
    expect(screen.getByRole('checkbox', { name: 'Warning' })).toBeChecked();
    expect(screen.getByRole('checkbox', { name: 'Critical' })).not.toBeChecked();
  });

  it('says when the cluster has no findings at all', async () => {
    server.use(...clusterHandlers({ findings: [] }));
    renderRoutes(routes, `/clusters/${CLUSTER_ID}/findings`);
    expect(await screen.findByRole('region', { name: 'No findings yet' })).toBeInTheDocument();
  });

  it("shows the API's message when findings fail to load, and retries", async () => {
    let calls = 0;
    server.use(...clusterHandlers());
    server.use(
      http.get(apiUrl(`/clusters/${CLUSTER_ID}/findings`), () => {
        calls += 1;
        if (calls === 1) {
          return HttpResponse.json(apiError('unavailable', 'The database is not reachable.'), { status: 503 });
        }
      }),
    );
    const { user } = renderRoutes(routes, `/clusters/${CLUSTER_ID}/findings`);
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load findings');
    expect(alert).toHaveTextContent('The database is not reachable.');
    await user.click(within(alert).getByRole('button', { name: 'Try again' }));
    expect(await screen.findByRole('table', { name: 'Findings' })).toBeInTheDocument();
  });
});
