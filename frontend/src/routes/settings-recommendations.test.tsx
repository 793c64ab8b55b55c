import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { ClusterLookbackPanel } from '@/features/clusters';
import { routes } from '@/router';
import { apiError, renderRoutes, renderWithClient, SESSION } from '@/test/render';
import { apiUrl, server } from '@/test/server';

// The lookback choices are AWS Compute Optimizer's look-back periods: 14 days (default), 32 or 93.
const CLUSTER_ID = 'c1000000-0000-4000-8000-000000000001';
const VIEWER = { ...SESSION, role: 'viewer' as const };

describe('Settings › Recommendations', () => {
  it('offers 14, 32 and 93 days and saves the choice', async () => {
    let put: unknown;
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/org/recommendation-preferences'), () => HttpResponse.json({ lookback_days: 14 })),
      http.put(apiUrl('/org/recommendation-preferences'), async ({ request }) => {
        put = await request.json();
        return HttpResponse.json({ lookback_days: 32 });
      }),
    );
    const { user } = renderRoutes(routes, '/settings/recommendations');
    const select = await screen.findByRole('combobox', { name: 'Lookback' });
    const options = Array.from((select as HTMLSelectElement).options).map((o) => o.textContent);
    expect(options).toEqual(['14 days (default)', '32 days', '93 days']);
    expect(screen.getByRole('button', { name: 'Save' })).toBeDisabled(); // nothing changed yet
    await user.selectOptions(select, '32');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(put).toEqual({ lookback_days: 32 }));
    expect(await screen.findByText(/cuts are judged on the last 32 days/)).toBeInTheDocument();
  });

  it('shows a viewer the lookback without a control', async () => {
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(VIEWER)),
      http.get(apiUrl('/org/recommendation-preferences'), () => HttpResponse.json({ lookback_days: 93 })),
    );
    renderRoutes(routes, '/settings/recommendations');
    expect(await screen.findByText('93 days')).toBeInTheDocument();
    expect(screen.queryByRole('combobox', { name: 'Lookback' })).not.toBeInTheDocument();
    expect(screen.getByText(/Only admins and owners can change it/)).toBeInTheDocument();
  });
});

describe('ClusterLookbackPanel', () => {
  const url = apiUrl(`/clusters/${CLUSTER_ID}/recommendation-preferences`);

  it("inherits the organisation's lookback, overrides it, and goes back to inheriting", async () => {
    const puts: unknown[] = [];
    let own: number | null = null;
    server.use(
      http.get(url, () =>
        HttpResponse.json({ lookback_days: own, organization_lookback_days: 32, effective_lookback_days: own ?? 32 }),
      ),
      http.put(url, async ({ request }) => {
        const body = (await request.json()) as { lookback_days: number | null };
        puts.push(body);
        own = body.lookback_days;
        return HttpResponse.json({ lookback_days: own, organization_lookback_days: 32, effective_lookback_days: own ?? 32 });
      }),
    );
    const user = userEvent.setup();
    renderWithClient(<ClusterLookbackPanel clusterId={CLUSTER_ID} canManage />);
    const select = await screen.findByRole('combobox', { name: 'Lookback' });
    expect(screen.getByRole('status')).toHaveTextContent("Cuts are judged on the last 32 days, the organisation's choice.");
    expect((select as HTMLSelectElement).value).toBe('');
    expect(screen.getByRole('option', { name: "Organisation's (32 days)" })).toBeInTheDocument();
    await user.selectOptions(select, '93');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByRole('status')).toHaveTextContent("last 93 days, this cluster's own choice."));
    await user.selectOptions(screen.getByRole('combobox', { name: 'Lookback' }), '');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(puts).toEqual([{ lookback_days: 93 }, { lookback_days: null }]));
    await waitFor(() => expect(screen.getByRole('status')).toHaveTextContent("the organisation's choice."));
  });

  it('shows the API refusal next to the field', async () => {
    server.use(
      http.get(url, () =>
        HttpResponse.json({ lookback_days: null, organization_lookback_days: 14, effective_lookback_days: 14 }),
      ),
      http.put(url, () =>
        HttpResponse.json(
          apiError('validation_error', 'Lookback (days): Input should be 14, 32 or 93', [
            { field: 'lookback_days', label: 'Lookback (days)', message: 'Input should be 14, 32 or 93' },
          ]),
          { status: 422 },
        ),
      ),
    );
    const user = userEvent.setup();
    renderWithClient(<ClusterLookbackPanel clusterId={CLUSTER_ID} canManage />);
    await user.selectOptions(await screen.findByRole('combobox', { name: 'Lookback' }), '32');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findAllByText(/Input should be 14, 32 or 93/)).not.toHaveLength(0);
  });

  it('has no control for a viewer', async () => {
    server.use(
      http.get(url, () =>
        HttpResponse.json({ lookback_days: 93, organization_lookback_days: 14, effective_lookback_days: 93 }),
      ),
    );
    renderWithClient(<ClusterLookbackPanel clusterId={CLUSTER_ID} canManage={false} />);
    expect(await screen.findByText(/this cluster's own choice/)).toHaveTextContent(
      "Cuts are judged on the last 93 days, this cluster's own choice.",
    );
    expect(screen.queryByRole('combobox')).not.toBeInTheDocument();
  });
});
