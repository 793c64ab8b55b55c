import { screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { routes } from '@/router';
import { apiError, renderRoutes, SESSION } from '@/test/render';
import { apiUrl, server } from '@/test/server';

const VIEWER = { ...SESSION, role: 'viewer' as const };
const ADMIN = { ...SESSION, role: 'admin' as const };
const SMTP_ERROR = '550 5.1.1 mailbox unavailable (smtp.example.com)';

const SETTINGS = {
  enabled: true,
  include_viewers: false,
  smtp_configured: true,
  recipients: ['ada@example.com'],
  caller_email_verified: true,
  last_sends: [
    {
      id: 'd0000000-0000-4000-8000-000000000002',
      week_start: '2026-11-16',
      status: 'sent',
      recipients: 2,
      attempts: 1,
      error: null,
      sent_at: '2026-11-16T08:00:05Z',
      created_at: '2026-11-16T08:00:00Z',
    },
    {
      id: 'd0000000-0000-4000-8000-000000000001',
      week_start: '2026-11-09',
      status: 'failed',
      recipients: 0,
      attempts: 3,
      error: SMTP_ERROR,
      sent_at: null,
      created_at: '2026-11-09T08:00:00Z',
    },
  ],
};

const PREVIEW = {
  week_start: '2026-11-16',
  subject: 'Headroom weekly: 2 findings need attention',
  text: 'Headroom weekly\n\nprod-east: 2 findings\n',
  html: '<html><body><h1>Headroom weekly</h1><p>prod-east: 2 findings</p></body></html>',
  all_clear: false,
};

const EAST = 'c0ffee00-0000-4000-8000-0000000000e1';
const WEST = 'c0ffee00-0000-4000-8000-0000000000e2';
const CLUSTERS = [EAST, WEST].map((id, i) => ({
  id,
  name: i === 0 ? 'prod-east' : 'prod-west',
  tikv_version: '8.5.1',
  deployment_kind: 'operator',
  tags: {},
  is_demo: false,
  created_at: '2026-11-01T10:00:00Z',
}));
const MY_PREFS = { weekly_email: true, cluster_ids: null, unsubscribed_at: null };

function handlers(session: typeof SESSION | typeof VIEWER | typeof ADMIN = SESSION, settings: object = SETTINGS) {
  return [
    http.get(apiUrl('/auth/me'), () => HttpResponse.json(session)),
    http.get(apiUrl('/org/digest'), () => HttpResponse.json(settings)),
    http.get(apiUrl('/org/digest/preview'), () => HttpResponse.json(PREVIEW)),
    http.get(apiUrl('/digest/preferences'), () => HttpResponse.json(MY_PREFS)),
    http.get(apiUrl('/clusters'), () => HttpResponse.json({ items: CLUSTERS, total: CLUSTERS.length })),
  ];
}

describe('Settings › Weekly email', () => {
  it('shows the settings, recipients, last sends with their errors and the sandboxed preview', async () => {
    server.use(...handlers());
    renderRoutes(routes, '/settings/digest');
    expect(await screen.findByRole('checkbox', { name: /Send the weekly advisory email/ })).toBeChecked();
    expect(screen.getByRole('checkbox', { name: /Include viewers/ })).not.toBeChecked();
    expect(screen.getByRole('list', { name: 'Recipients' })).toHaveTextContent('ada@example.com');
    const table = screen.getByRole('table');
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toHaveTextContent('Week of 16 Nov 2026');
    expect(rows[0]).toHaveTextContent('Sent');
    expect(within(rows[0] as HTMLElement).getAllByRole('cell')[1]).toHaveTextContent('2');
    expect(rows[1]).toHaveTextContent('Failed');
    expect(rows[1]).toHaveTextContent(SMTP_ERROR);
    const frame = await screen.findByTitle('Email preview');
    expect(frame).toHaveAttribute('sandbox', '');
    expect(frame).toHaveAttribute('srcdoc', PREVIEW.html);
    expect(screen.getByText(PREVIEW.subject)).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Weekly email' })).toHaveAttribute('href', '/settings/digest');
  });

  it('shows its own content at once and asks for the slow preview only after it, with a loading state', async () => {
    const order: string[] = [];
    let release: () => void = () => undefined;
    const previewHeld = new Promise<void>((resolve) => {
      release = resolve;
    });
    server.use(...handlers());
    server.use(
      http.get(apiUrl('/org/digest'), async () => {
        await new Promise((resolve) => setTimeout(resolve, 30));
        order.push('settings');
        return HttpResponse.json(SETTINGS);
      }),
      http.get(apiUrl('/org/digest/preview'), async () => {
        order.push('preview');
        await previewHeld;
        return HttpResponse.json(PREVIEW);
      }),
    );
    renderRoutes(routes, '/settings/digest');
    expect(await screen.findByRole('checkbox', { name: /Send the weekly advisory email/ })).toBeChecked();
    expect(screen.getByRole('heading', { name: 'Last sends' })).toBeInTheDocument();
    // the page is usable while the email renders
    expect(await screen.findByText("Rendering this week's email…")).toBeInTheDocument();
    await waitFor(() => expect(order).toEqual(['settings', 'preview']));
    expect(screen.queryByTitle('Email preview')).not.toBeInTheDocument();
    release();
    const frame = await screen.findByTitle('Email preview');
    expect(frame).toHaveAttribute('sandbox', '');
  });

  it('shows the text version on request', async () => {
    server.use(...handlers());
    const { user } = renderRoutes(routes, '/settings/digest');
    await user.click(await screen.findByRole('button', { name: 'Text' }));
    expect(screen.getByLabelText('Email text')).toHaveTextContent('prod-east: 2 findings');
    expect(screen.queryByTitle('Email preview')).not.toBeInTheDocument();
  });

  it('lets an admin include viewers and shows what the API saved', async () => {
    let body: unknown = null;
    server.use(...handlers(ADMIN));
    server.use(
      http.patch(apiUrl('/org/digest'), async ({ request }) => {
        body = await request.json();
        return HttpResponse.json({ ...SETTINGS, include_viewers: true, recipients: ['ada@example.com', 'grace@example.com'] });
      }),
    );
    const { user } = renderRoutes(routes, '/settings/digest');
    await user.click(await screen.findByRole('checkbox', { name: /Include viewers/ }));
    await waitFor(() => expect(body).toEqual({ include_viewers: true }));
    expect(await screen.findByText('grace@example.com')).toBeInTheDocument();
    expect(screen.getByRole('checkbox', { name: /Include viewers/ })).toBeChecked();
  });

  it('shows why a change was refused', async () => {
    server.use(...handlers());
    server.use(
      http.patch(apiUrl('/org/digest'), () =>
        HttpResponse.json(apiError('forbidden', 'This action needs the admin role.'), { status: 403 }),
      ),
    );
    const { user } = renderRoutes(routes, '/settings/digest');
    await user.click(await screen.findByRole('checkbox', { name: /Send the weekly advisory email/ }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Could not save: This action needs the admin role.');
    expect(screen.getByRole('checkbox', { name: /Send the weekly advisory email/ })).toBeChecked();
  });

  it('shows a viewer the settings read-only and no test send', async () => {
    server.use(...handlers(VIEWER));
    renderRoutes(routes, '/settings/digest');
    expect(await screen.findByRole('checkbox', { name: /Send the weekly advisory email/ })).toBeDisabled();
    expect(screen.getByRole('checkbox', { name: /Include viewers/ })).toBeDisabled();
    expect(screen.getByText('Only admins and owners can change these settings.')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Send me a test' })).toBeDisabled();
  });

  it('sends a test and shows the outcome', async () => {
    let posts = 0;
    server.use(...handlers());
    server.use(
      http.post(apiUrl('/org/digest/send-test'), () => {
        posts += 1;
        return HttpResponse.json({ status: 'sent', to: 'ada@example.com', detail: 'Sent; follow its link to verify your address.' });
      }),
    );
    const { user } = renderRoutes(routes, '/settings/digest');
    await user.click(await screen.findByRole('button', { name: 'Send me a test' }));
    expect(await screen.findByText(/Sent to ada@example.com: Sent; follow its link/)).toBeInTheDocument();
    expect(posts).toBe(1);
  });

  it('says when the test was skipped for want of a mail server', async () => {
    server.use(...handlers(SESSION, { ...SETTINGS, smtp_configured: false }));
    server.use(
      http.post(apiUrl('/org/digest/send-test'), () =>
        HttpResponse.json({
          status: 'skipped',
          to: 'ada@example.com',
          detail: 'No mail server is configured (HEADROOM_SMTP_HOST); nothing was sent.',
        }),
      ),
    );
    const { user } = renderRoutes(routes, '/settings/digest');
    expect(await screen.findByText(/This installation has no mail server/)).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Send me a test' }));
    expect(await screen.findByText(/Not sent to ada@example.com: No mail server is configured/)).toBeInTheDocument();
  });

  it('shows the empty states: no sends, no recipients', async () => {
    server.use(...handlers(SESSION, { ...SETTINGS, recipients: [], caller_email_verified: false, last_sends: [] }));
    renderRoutes(routes, '/settings/digest');
    expect(await screen.findByRole('heading', { name: 'No sends yet' })).toBeInTheDocument();
    expect(screen.queryByRole('table')).not.toBeInTheDocument();
    expect(screen.getByText(/Nobody yet/)).toBeInTheDocument();
    expect(screen.getByText(/your address is not verified yet/)).toBeInTheDocument();
  });

  it('shows a loading state, then the error with a retry', async () => {
    let calls = 0;
    server.use(...handlers());
    server.use(
      http.get(apiUrl('/org/digest'), () => {
        calls += 1;
        return calls === 1
          ? HttpResponse.json(apiError('internal_error', 'Database unavailable.'), { status: 500 })
          : HttpResponse.json(SETTINGS);
      }),
    );
    const { user } = renderRoutes(routes, '/settings/digest');
    expect(await screen.findByText('Loading the weekly email settings…')).toBeInTheDocument();
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load the weekly email settings');
    expect(alert).toHaveTextContent('Database unavailable.');
    await user.click(within(alert).getByRole('button', { name: 'Try again' }));
    expect(await screen.findByRole('checkbox', { name: /Send the weekly advisory email/ })).toBeChecked();
  });

  it('shows the preview error without hiding the settings', async () => {
    server.use(...handlers());
    server.use(
      http.get(apiUrl('/org/digest/preview'), () =>
        HttpResponse.json(apiError('internal_error', 'Could not render.'), { status: 500 }),
      ),
    );
    renderRoutes(routes, '/settings/digest');
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load the preview');
    expect(screen.getByRole('checkbox', { name: /Send the weekly advisory email/ })).toBeChecked();
  });

  it('verifies the address from the link once, says so, and drops the token from the address', async () => {
    const tokens: string[] = [];
    server.use(...handlers());
    server.use(
      http.post(apiUrl('/org/digest/verify/:token'), ({ params }) => {
        tokens.push(String(params.token));
        return HttpResponse.json({ email: 'ada@example.com', verified: true });
      }),
    );
    const { router } = renderRoutes(routes, '/settings/digest?verify=tok.en-1');
    expect(await screen.findByText('Email verified: ada@example.com now gets the weekly email.')).toBeInTheDocument();
    await waitFor(() => expect(router.state.location.search).toBe(''));
    expect(screen.getByText('Email verified: ada@example.com now gets the weekly email.')).toBeInTheDocument();
    expect(tokens).toEqual(['tok.en-1']);
  });

  it('shows why a verification link was refused', async () => {
    server.use(...handlers());
    server.use(
      http.post(apiUrl('/org/digest/verify/:token'), () =>
        HttpResponse.json(
          apiError('not_found', 'This verification link is unknown, expired or for another account or address.'),
          { status: 404 },
        ),
      ),
    );
    renderRoutes(routes, '/settings/digest?verify=expired');
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not verify your email address');
    expect(alert).toHaveTextContent('unknown, expired or for another account');
  });

  it('lets any member choose their own clusters and saves them', async () => {
    const saved: unknown[] = [];
    server.use(
      ...handlers(VIEWER),
      http.put(apiUrl('/digest/preferences'), async ({ request }) => {
        const body = (await request.json()) as { weekly_email: boolean; cluster_ids: string[] | null };
        saved.push(body);
        return HttpResponse.json({ ...body, unsubscribed_at: null });
      }),
    );
    const { user } = renderRoutes(routes, '/settings/digest');
    const mine = await screen.findByRole('region', { name: 'Your weekly email' });
    expect(await within(mine).findByRole('checkbox', { name: 'Send me the weekly email' })).toBeChecked();
    expect(within(mine).getByRole('radio', { name: /All clusters/ })).toBeChecked();
    await user.click(within(mine).getByRole('radio', { name: 'Only the clusters I choose' }));
    await user.click(within(mine).getByRole('checkbox', { name: 'prod-west' }));
    await user.click(within(mine).getByRole('button', { name: 'Save my preferences' }));
    expect(await within(mine).findByText('Saved.')).toBeInTheDocument();
    expect(saved).toEqual([{ weekly_email: true, cluster_ids: [WEST] }]);
  });

  it('says when an email link unsubscribed you, and turns it back on', async () => {
    const saved: unknown[] = [];
    server.use(
      // first: the first matching handler answers
      http.get(apiUrl('/digest/preferences'), () =>
        HttpResponse.json({ weekly_email: false, cluster_ids: [EAST], unsubscribed_at: '2026-11-17T09:30:00Z' }),
      ),
      ...handlers(),
      http.put(apiUrl('/digest/preferences'), async ({ request }) => {
        const body = (await request.json()) as { weekly_email: boolean; cluster_ids: string[] | null };
        saved.push(body);
        return HttpResponse.json({ ...body, unsubscribed_at: null });
      }),
    );
    const { user } = renderRoutes(routes, '/settings/digest');
    const mine = await screen.findByRole('region', { name: 'Your weekly email' });
    expect(await within(mine).findByRole('note')).toHaveTextContent(/You unsubscribed with an email's link on/);
    const weekly = within(mine).getByRole('checkbox', { name: 'Send me the weekly email' });
    expect(weekly).not.toBeChecked();
    await user.click(weekly);
    expect(within(mine).getByRole('checkbox', { name: 'prod-east' })).toBeChecked();
    await user.click(within(mine).getByRole('button', { name: 'Save my preferences' }));
    await waitFor(() => expect(saved).toEqual([{ weekly_email: true, cluster_ids: [EAST] }]));
  });
});
