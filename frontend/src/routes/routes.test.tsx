import { screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { routes } from '@/router';
import { apiError, renderRoutes, SESSION } from '@/test/render';
import { apiUrl, server } from '@/test/server';

const notAuthenticated = () =>
  HttpResponse.json(apiError('not_authenticated', 'Log in to continue.'), { status: 401 });

describe('signed-in routes', () => {
  it('redirect to /login, remembering the page, when /auth/me answers 401', async () => {
    server.use(http.get(apiUrl('/auth/me'), notAuthenticated));
    const { router } = renderRoutes(routes, '/clusters');
    expect(await screen.findByRole('heading', { name: 'Log in to Headroom' })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/login');
    expect(router.state.location.search).toBe('?next=%2Fclusters');
  });

  it('show the shell and the empty clusters state with what to do next', async () => {
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/clusters'), () => HttpResponse.json({ items: [], total: 0 })),
    );
    renderRoutes(routes, '/');
    expect(await screen.findByRole('heading', { name: 'Clusters', level: 1 })).toBeInTheDocument();
    expect(screen.getByRole('navigation', { name: 'Main' })).toBeInTheDocument();
    expect(screen.getByText('Analytical Engines')).toBeInTheDocument();
    // The account button's name is the text it shows (not "Account menu for …").
    const account = screen.getByRole('button', { name: 'Ada Lovelace' });
    expect(account).toHaveTextContent('Ada Lovelace');
    expect(account).toHaveAttribute('aria-haspopup', 'menu');
    const empty = await screen.findByRole('region', { name: 'No clusters yet' });
    expect(
      within(empty).getByText('Connect an AWS account and a Prometheus to see your TiKV clusters.'),
    ).toBeInTheDocument();
    // ... and the way to do it.
    expect(within(empty).getByRole('link', { name: 'Connect AWS account' })).toHaveAttribute(
      'href',
      '/settings/sources/aws/new',
    );
    expect(within(empty).getByRole('link', { name: 'Add Prometheus source' })).toHaveAttribute(
      'href',
      '/settings/sources/prometheus/new',
    );
  });

  it('tell a viewer with no clusters to ask an admin, with no connect buttons', async () => {
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json({ ...SESSION, role: 'viewer' })),
      http.get(apiUrl('/clusters'), () => HttpResponse.json({ items: [], total: 0 })),
    );
    renderRoutes(routes, '/');
    const empty = await screen.findByRole('region', { name: 'No clusters yet' });
    expect(within(empty).getByText('Ask an admin of your organisation to connect them.')).toBeInTheDocument();
    expect(within(empty).queryByRole('link')).not.toBeInTheDocument();
  });

  it('list clusters in a table', async () => {
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/clusters'), () =>
        HttpResponse.json({
          items: [
            {
              id: 'c0ffee00-0000-4000-8000-000000000001',
              name: 'prod-tikv',
              tikv_version: '8.5.1',
              deployment_kind: 'operator',
              tags: { env: 'prod' },
              is_demo: false,
              created_at: '2026-11-01T10:00:00Z',
            },
          ],
          total: 1,
        }),
      ),
    );
    renderRoutes(routes, '/clusters');
    const row = await screen.findByRole('row', { name: /prod-tikv/ });
    expect(within(row).getByRole('cell', { name: '8.5.1' })).toBeInTheDocument();
    expect(within(row).getByText('TiDB Operator')).toBeInTheDocument();
    expect(within(row).getByText('env=prod')).toBeInTheDocument();
  });

  it("show each cluster's health, headroom score, nearest ceiling, spend and savings, sortable", async () => {
    const cluster = (id: string, name: string) => ({
      id, name, tikv_version: 'v8.5.1', deployment_kind: 'tiup', tags: {}, is_demo: false,
      created_at: '2026-11-01T10:00:00Z',
    });
    const health = (id: string, name: string, score: number | null, days: number | null, critical: number,
      spend: number, savings: number) => ({
      id, name, is_demo: false, tikv_version: 'v8.5.1',
      open_by_severity: { critical, warning: 1, info: 0 },
      headroom_score: score,
      tightest: score === null ? null : { node: '10.0.1.10:20160', metric: 'data_iops', peak_percent: 100 - score, ceiling: 'gp3 3,000 IOPS' },
      nearest_ceiling: days === null ? null : { entity_kind: 'volume', entity_id: `vol-${name}`, metric: 'iops', unit: 'IOPS', ceiling: 3000, days, days_low: null, days_high: null, hits_at: null },
      monthly_spend_usd: spend, unpriced: [], savings_usd: savings, scored_at: '2026-11-21T10:00:00Z',
      advised_at: '2026-11-21T10:00:00Z',
    });
    const A = 'c0ffee00-0000-4000-8000-00000000000a';
    const B = 'c0ffee00-0000-4000-8000-00000000000b';
    const C = 'c0ffee00-0000-4000-8000-00000000000c';
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/clusters'), () =>
        HttpResponse.json({ items: [cluster(A, 'alpha'), cluster(B, 'beta'), cluster(C, 'gamma')], total: 3 }),
      ),
      http.get(apiUrl('/fleet'), () =>
        HttpResponse.json({
          items: [health(A, 'alpha', 60, 40, 0, 1200, 0), health(B, 'beta', 8, 3.4, 2, 3400, 120), health(C, 'gamma', null, null, 0, 0, 0)],
          total_spend_usd: 4600, total_savings_usd: 120,
          window_start: '2026-11-01T12:00:00Z', window_end: '2026-11-02T12:00:00Z',
          score_definition: 'Headroom score = 100 - the highest peak use ...',
        }),
      ),
    );
    const { user } = renderRoutes(routes, '/clusters');
    const beta = await screen.findByRole('row', { name: /beta/ });
    expect(within(beta).getByText('2 critical, 1 warning, 0 info')).toBeInTheDocument();
    expect(within(beta).getByText('peak 92% of 10.0.1.10:20160 data volume IOPS')).toBeInTheDocument();
    expect(within(beta).getByText('volume vol-beta IOPS: in 3 days')).toBeInTheDocument();
    expect(within(beta).getByRole('cell', { name: '$3,400' })).toBeInTheDocument();
    expect(screen.getByText(/Spend Headroom sees/)).toHaveTextContent('$4,600 a month; savings the open findings offer: $120 a month');
    expect(screen.getByText(/Headroom score = 100 - the highest peak use/)).toBeInTheDocument();
    const names = () => screen.getAllByRole('row').slice(1).map((r) => within(r).getAllByRole('link')[0]!.textContent);
    await user.click(screen.getByRole('button', { name: /Headroom score/ }));
    expect(names()).toEqual(['beta', 'alpha', 'gamma']); // lowest score first; no data last
    expect(screen.getByRole('columnheader', { name: /Headroom score/ })).toHaveAttribute('aria-sort', 'ascending');
    await user.click(screen.getByRole('button', { name: /Nearest ceiling/ }));
    expect(names()).toEqual(['beta', 'alpha', 'gamma']);
    await user.click(screen.getByRole('button', { name: /Nearest ceiling/ }));
    expect(names()).toEqual(['alpha', 'beta', 'gamma']); // descending; nothing projected stays last
    await user.click(screen.getByRole('button', { name: /Spend/ }));
    expect(names()).toEqual(['beta', 'alpha', 'gamma']);
  });

  it('say the first analysis is running for a cluster never advised, instead of zeros', async () => {
    const A = 'c0ffee00-0000-4000-8000-00000000000a';
    const B = 'c0ffee00-0000-4000-8000-00000000000b';
    const cluster = (id: string, name: string) => ({
      id, name, tikv_version: 'v8.5.1', deployment_kind: 'tiup', tags: {}, is_demo: id === A,
      advised_at: id === A ? null : '2026-11-02T11:45:00Z', created_at: '2026-11-01T10:00:00Z',
    });
    // What the API reports for a cluster whose data is in but whose first advice run has not ended: no findings
    // yet, no savings, a score of 0 and a ceiling reached; none of it may read as the cluster's state.
    const health = (id: string, name: string) => ({
      id, name, is_demo: id === A, tikv_version: 'v8.5.1', advised_at: id === A ? null : '2026-11-02T11:45:00Z',
      open_by_severity: { critical: 0, warning: id === A ? 0 : 2, info: 0 }, headroom_score: 0,
      tightest: { node: '10.0.1.10:20160', metric: 'data_iops', peak_percent: 100, ceiling: 'gp3 3,000 IOPS' },
      nearest_ceiling: { entity_kind: 'volume', entity_id: `vol-${name}`, metric: 'iops', unit: 'IOPS', ceiling: 3000, days: 0, days_low: null, days_high: null, hits_at: null },
      monthly_spend_usd: 900, unpriced: [], savings_usd: 0, scored_at: '2026-11-02T12:00:00Z',
    });
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/clusters'), () => HttpResponse.json({ items: [cluster(A, 'demo'), cluster(B, 'beta')], total: 2 })),
      http.get(apiUrl('/fleet'), () =>
        HttpResponse.json({
          items: [health(A, 'demo'), health(B, 'beta')],
          total_spend_usd: 1800, total_savings_usd: 0,
          window_start: '2026-11-01T12:00:00Z', window_end: '2026-11-02T12:00:00Z',
          score_definition: 'Headroom score = 100 - the highest peak use ...',
        }),
      ),
    );
    renderRoutes(routes, '/clusters');
    const demo = await screen.findByRole('row', { name: /demo/ });
    expect(within(demo).getAllByText('First analysis running…')).toHaveLength(2);
    expect(within(demo).queryByText(/0 critical/)).not.toBeInTheDocument();
    expect(within(demo).queryByText(/reached/)).not.toBeInTheDocument();
    expect(within(demo).queryByText('$0')).not.toBeInTheDocument();
    expect(within(demo).queryByRole('cell', { name: '0' })).not.toBeInTheDocument();
    expect(within(demo).getByRole('cell', { name: '$900' })).toBeInTheDocument(); // spend is known already
    // an advised cluster shows its numbers as before
    const beta = screen.getByRole('row', { name: /beta/ });
    expect(within(beta).getByText('0 critical, 2 warning, 0 info')).toBeInTheDocument();
    expect(within(beta).getByText('volume vol-beta IOPS: reached')).toBeInTheDocument();
    expect(screen.getByText(/Spend Headroom sees/)).toHaveTextContent(
      'savings the open findings offer: $0 a month so far (the first analysis of some clusters is still running)',
    );
  });

  it("show the API's message when clusters fail to load, and retry", async () => {
    let calls = 0;
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/clusters'), () => {
        calls += 1;
        return calls === 1
          ? HttpResponse.json(apiError('unavailable', 'The database is not reachable.'), { status: 503 })
          : HttpResponse.json({ items: [], total: 0 });
      }),
    );
    const { user } = renderRoutes(routes, '/clusters');
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load clusters');
    expect(alert).toHaveTextContent('The database is not reachable.');
    await user.click(within(alert).getByRole('button', { name: 'Try again' }));
    expect(await screen.findByRole('region', { name: 'No clusters yet' })).toBeInTheDocument();
  });

  it('log out from the user menu and land on /login', async () => {
    let loggedIn = true;
    server.use(
      http.get(apiUrl('/auth/me'), () => (loggedIn ? HttpResponse.json(SESSION) : notAuthenticated())),
      http.get(apiUrl('/clusters'), () => HttpResponse.json({ items: [], total: 0 })),
      http.post(apiUrl('/auth/logout'), () => {
        loggedIn = false;
        return new HttpResponse(null, { status: 204 });
      }),
    );
    const { user, router } = renderRoutes(routes, '/clusters');
    await user.click(await screen.findByRole('button', { name: 'Ada Lovelace' }));
    await user.click(screen.getByRole('menuitem', { name: 'Log out' }));
    expect(await screen.findByRole('heading', { name: 'Log in to Headroom' })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/login');
    expect(router.state.location.search).toBe('');
  });
});

describe('public routes', () => {
  it('send a signed-in person from /login to their clusters', async () => {
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/clusters'), () => HttpResponse.json({ items: [], total: 0 })),
    );
    const { router } = renderRoutes(routes, '/login');
    expect(await screen.findByRole('heading', { name: 'Clusters', level: 1 })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/clusters');
  });

  it('ignore a ?next that leaves the site', async () => {
    server.use(
      http.get(apiUrl('/auth/me'), notAuthenticated),
      http.post(apiUrl('/auth/login'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/clusters'), () => HttpResponse.json({ items: [], total: 0 })),
    );
    const { user, router } = renderRoutes(routes, '/login?next=//evil.example/phish');
    await user.type(await screen.findByLabelText('Email'), 'ada@example.com');
    await user.type(screen.getByLabelText('Password'), 'correct horse battery');
    await user.click(screen.getByRole('button', { name: 'Log in' }));
    expect(await screen.findByRole('heading', { name: 'Clusters', level: 1 })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/clusters');
  });
});
