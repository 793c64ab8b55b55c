import { screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { routes } from '@/router';
import { apiError, renderRoutes, SESSION } from '@/test/render';
import { apiUrl, server } from '@/test/server';
import { AWS_CONNECTION, HEALTH_FAILING, PROM_SOURCE } from './settings-fixtures';

const VIEWER = { ...SESSION, role: 'viewer' as const };

function signedIn(session: typeof SESSION | typeof VIEWER = SESSION) {
  server.use(http.get(apiUrl('/auth/me'), () => HttpResponse.json(session)));
}

describe('Settings › Data sources', () => {
  it('is reached from the Settings link in the main nav and lists sources with their health', async () => {
    signedIn();
    server.use(
      http.get(apiUrl('/clusters'), () => HttpResponse.json({ items: [], total: 0 })),
      http.get(apiUrl('/sources/aws'), () => HttpResponse.json([AWS_CONNECTION])),
      http.get(apiUrl('/sources/prometheus'), () => HttpResponse.json([PROM_SOURCE])),
    );
    const { user, router } = renderRoutes(routes, '/clusters');
    const nav = await screen.findByRole('navigation', { name: 'Main' });
    await user.click(within(nav).getByRole('link', { name: 'Settings' }));

    expect(await screen.findByRole('heading', { name: 'Data sources', level: 1 })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/settings/sources');
    expect(screen.getByRole('navigation', { name: 'Settings' })).toBeInTheDocument();

    const aws = within(await screen.findByRole('table', { name: 'AWS connections' }));
    const awsRow = aws.getByRole('row', { name: /prod-account/ });
    expect(within(awsRow).getByText('Healthy')).toBeInTheDocument();
    expect(within(awsRow).getByText('us-east-1, eu-west-1')).toBeInTheDocument();
    expect(within(awsRow).getByText('Last success: 21 Nov 2026, 09:30 UTC')).toBeInTheDocument();

    const prom = within(await screen.findByRole('table', { name: 'Prometheus sources' }));
    const promRow = prom.getByRole('row', { name: /prod-prometheus/ });
    expect(within(promRow).getByText('Unhealthy')).toBeInTheDocument();
    expect(
      within(promRow).getByText(`${HEALTH_FAILING.last_error} (3 failures in a row)`),
    ).toBeInTheDocument();
    expect(within(promRow).getByText('Last success: 20 Nov 2026, 08:00 UTC')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Connect AWS account' })).toHaveAttribute('href', '/settings/sources/aws/new');
    expect(screen.getByRole('link', { name: 'Add Prometheus source' })).toBeInTheDocument();
  });

  it('marks the demo source as simulated and shows an error with ordinary words intact', async () => {
    signedIn();
    const noCredentials =
      "This Headroom server has no AWS credentials of its own, so it cannot assume your role: calling sts:AssumeRole takes the server's own credentials. (AWS said: Unable to locate credentials.)";
    server.use(
      http.get(apiUrl('/sources/aws'), () =>
        HttpResponse.json([
          { ...AWS_CONNECTION, id: 'demo', name: 'Demo AWS account', is_demo: true },
          { ...AWS_CONNECTION, health: { ...HEALTH_FAILING, consecutive_failures: 1, last_error: noCredentials } },
        ]),
      ),
      http.get(apiUrl('/sources/prometheus'), () => HttpResponse.json([])),
    );
    renderRoutes(routes, '/settings/sources');
    const aws = within(await screen.findByRole('table', { name: 'AWS connections' }));
    const demo = aws.getByRole('row', { name: /Demo AWS account/ });
    expect(within(demo).getByText('Demo')).toBeInTheDocument();
    expect(within(demo).getByText('Simulated (demo)')).toBeInTheDocument();
    const failing = aws.getByRole('row', { name: /prod-account/ });
    expect(within(failing).getByText(noCredentials)).toBeInTheDocument();
    expect(within(failing).queryByText(/Demo/)).not.toBeInTheDocument();
  });

  it('shows empty states with what to do next', async () => {
    signedIn();
    server.use(
      http.get(apiUrl('/sources/aws'), () => HttpResponse.json([])),
      http.get(apiUrl('/sources/prometheus'), () => HttpResponse.json([])),
    );
    renderRoutes(routes, '/settings');
    const aws = await screen.findByRole('region', { name: 'No AWS accounts connected' });
    expect(within(aws).getByRole('link', { name: 'Connect AWS account' })).toBeInTheDocument();
    const prom = await screen.findByRole('region', { name: 'No Prometheus sources' });
    expect(within(prom).getByRole('link', { name: 'Add Prometheus source' })).toBeInTheDocument();
  });

  it("shows the API's error and retries", async () => {
    signedIn();
    let calls = 0;
    server.use(
      http.get(apiUrl('/sources/aws'), () => {
        calls += 1;
        return calls === 1
          ? HttpResponse.json(apiError('unavailable', 'The database is not reachable.'), { status: 503 })
          : HttpResponse.json([AWS_CONNECTION]);
      }),
      http.get(apiUrl('/sources/prometheus'), () => HttpResponse.json([])),
    );
    const { user } = renderRoutes(routes, '/settings/sources');
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load AWS connections');
    expect(alert).toHaveTextContent('The database is not reachable.');
    await user.click(within(alert).getByRole('button', { name: 'Try again' }));
    expect(await screen.findByRole('row', { name: /prod-account/ })).toBeInTheDocument();
  });

  it('offers viewers no way to connect or add sources', async () => {
    signedIn(VIEWER);
    server.use(
      http.get(apiUrl('/sources/aws'), () => HttpResponse.json([])),
      http.get(apiUrl('/sources/prometheus'), () => HttpResponse.json([PROM_SOURCE])),
    );
    renderRoutes(routes, '/settings/sources');
    const aws = await screen.findByRole('region', { name: 'No AWS accounts connected' });
    expect(within(aws).getByText('Ask an admin of your organisation to connect one.')).toBeInTheDocument();
    await screen.findByRole('row', { name: /prod-prometheus/ });
    expect(screen.queryByRole('link', { name: 'Connect AWS account' })).not.toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'Add Prometheus source' })).not.toBeInTheDocument();
  });

  it('sends a viewer who opens the connect page back to the list', async () => {
    signedIn(VIEWER);
    server.use(
      http.get(apiUrl('/sources/aws'), () => HttpResponse.json([])),
      http.get(apiUrl('/sources/prometheus'), () => HttpResponse.json([])),
    );
    const { router } = renderRoutes(routes, '/settings/sources/aws/new');
    expect(await screen.findByRole('heading', { name: 'Data sources', level: 1 })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/settings/sources');
  });
});
