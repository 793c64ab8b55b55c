import { screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { routes } from '@/router';
import { apiError, renderRoutes, SESSION } from '@/test/render';
import { apiUrl, server } from '@/test/server';

const ADMIN = { ...SESSION, role: 'admin' as const };
const VIEWER = { ...SESSION, role: 'viewer' as const };
const GRACE_ID = '7a1c1f0e-8a51-4b8e-9a57-1a2b3c4d5e70';

const MEMBERS = [
  { user_id: SESSION.user.id, email: 'ada@example.com', full_name: 'Ada Lovelace', role: 'owner', joined_at: '2026-11-01T10:00:00Z' },
  { user_id: GRACE_ID, email: 'grace@example.com', full_name: 'Grace Hopper', role: 'viewer', joined_at: '2026-11-02T10:00:00Z' },
];

const TOKEN = {
  id: 'c0000000-0000-4000-8000-000000000003',
  name: 'ci',
  token_prefix: 'hr_abc1234',
  role: 'viewer',
  created_at: '2026-11-20T10:00:00Z',
  last_used_at: null,
  expires_at: null,
  revoked_at: null,
};

function signedIn(session: typeof SESSION | typeof ADMIN | typeof VIEWER) {
  server.use(
    http.get(apiUrl('/auth/me'), () => HttpResponse.json(session)),
    http.get(apiUrl('/org/members'), () => HttpResponse.json(MEMBERS)),
  );
}

describe('Settings › Members', () => {
  it('lets an owner change a role', async () => {
    signedIn(SESSION);
    let patched: unknown;
    server.use(
      http.patch(apiUrl(`/org/members/${GRACE_ID}`), async ({ request }) => {
        patched = await request.json();
        return HttpResponse.json({ ...MEMBERS[1], role: 'admin' });
      }),
    );
    const { user } = renderRoutes(routes, '/settings/members');
    const select = await screen.findByRole('combobox', { name: 'Role of Grace Hopper' });
    await user.selectOptions(select, 'admin');
    await waitFor(() => expect(patched).toEqual({ role: 'admin' }));
    expect(screen.getByRole('button', { name: 'Remove Grace Hopper' })).toBeInTheDocument();
    // Nobody removes themselves from here.
    expect(screen.queryByRole('button', { name: 'Remove Ada Lovelace' })).not.toBeInTheDocument();
  });

  it("shows the API's refusal, e.g. demoting the last owner", async () => {
    signedIn(SESSION);
    server.use(
      http.patch(apiUrl(`/org/members/${SESSION.user.id}`), () =>
        HttpResponse.json(apiError('conflict', 'An organisation needs at least one owner.'), { status: 409 }),
      ),
    );
    const { user } = renderRoutes(routes, '/settings/members');
    await user.selectOptions(await screen.findByRole('combobox', { name: 'Role of Ada Lovelace' }), 'viewer');
    expect(await screen.findByRole('alert')).toHaveTextContent('An organisation needs at least one owner.');
  });

  it('shows admins and viewers the roles read-only', async () => {
    signedIn(ADMIN);
    renderRoutes(routes, '/settings/members');
    const row = await screen.findByRole('row', { name: /Grace Hopper/ });
    expect(within(row).getByText('Viewer')).toBeInTheDocument();
    expect(screen.queryByRole('combobox')).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /Remove/ })).not.toBeInTheDocument();
    expect(screen.getByText('Only owners can change roles or remove members.')).toBeInTheDocument();
  });

  it('shows the error state with a retry', async () => {
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/org/members'), () =>
        HttpResponse.json(apiError('unavailable', 'The database is not reachable.'), { status: 503 }),
      ),
    );
    renderRoutes(routes, '/settings/members');
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load members');
    expect(within(alert).getByRole('button', { name: 'Try again' })).toBeInTheDocument();
  });
});

describe('Settings › Invitations', () => {
  it('creates an invitation and shows its link once with a copy button', async () => {
    signedIn(SESSION);
    const pending: unknown[] = [];
    server.use(
      http.get(apiUrl('/org/invitations'), () => HttpResponse.json(pending)),
      http.post(apiUrl('/org/invitations'), async ({ request }) => {
        const body = (await request.json()) as { email: string; role: string };
        const inv = {
          id: 'd0000000-0000-4000-8000-000000000004',
          email: body.email,
          role: body.role,
          created_at: '2026-11-21T10:00:00Z',
          expires_at: '2026-11-28T10:00:00Z',
          revoked_at: null,
        };
        pending.push(inv);
        return HttpResponse.json({ ...inv, accept_url: 'http://headroom.test/accept-invitation?token=tok_xyz' }, { status: 201 });
      }),
    );
    const { user } = renderRoutes(routes, '/settings/invitations');
    expect(await screen.findByRole('region', { name: 'No pending invitations' })).toBeInTheDocument();
    await user.type(screen.getByLabelText('Email'), 'linus@example.com');
    await user.selectOptions(screen.getByLabelText('Role'), 'admin');
    await user.click(screen.getByRole('button', { name: 'Send invitation' }));

    const link = await screen.findByRole('status', { name: 'Invitation link' });
    expect(link).toHaveTextContent('http://headroom.test/accept-invitation?token=tok_xyz');
    await user.click(within(link).getByRole('button', { name: 'Copy link' }));
    // user-event stands in for the clipboard; read back what the button wrote.
    expect(await navigator.clipboard.readText()).toBe('http://headroom.test/accept-invitation?token=tok_xyz');
    expect(within(link).getByRole('button', { name: 'Copied' })).toBeInTheDocument();
    const row = await screen.findByRole('row', { name: /linus@example.com/ });
    expect(within(row).getByText('Admin')).toBeInTheDocument();
    expect(within(row).getByRole('button', { name: 'Revoke invitation for linus@example.com' })).toBeInTheDocument();
  });

  it('puts an invalid email from the API next to the field', async () => {
    signedIn(SESSION);
    server.use(
      http.get(apiUrl('/org/invitations'), () => HttpResponse.json([])),
      http.post(apiUrl('/org/invitations'), () =>
        HttpResponse.json(
          apiError('validation_error', 'email: value is not a valid email address', [
            { field: 'email', message: 'value is not a valid email address: The domain name example.invalid does not exist.' },
          ]),
          { status: 422 },
        ),
      ),
    );
    const { user } = renderRoutes(routes, '/settings/invitations');
    await user.type(await screen.findByLabelText('Email'), 'x@example.invalid');
    await user.click(screen.getByRole('button', { name: 'Send invitation' }));
    await waitFor(() =>
      expect(screen.getByLabelText('Email')).toHaveAccessibleDescription(
        'Value is not a valid email address: The domain name example.invalid does not exist.',
      ),
    );
  });

  it('tells a viewer invitations are for admins and asks the API nothing', async () => {
    signedIn(VIEWER);
    const seen = vi.fn();
    server.use(http.get(apiUrl('/org/invitations'), () => (seen(), HttpResponse.json([]))));
    renderRoutes(routes, '/settings/invitations');
    expect(await screen.findByRole('region', { name: 'Invitations is for admins' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Send invitation' })).not.toBeInTheDocument();
    expect(seen).not.toHaveBeenCalled();
  });
});

describe('Settings › API tokens', () => {
  it('shows a new token once, with a copy button, then only its prefix', async () => {
    signedIn(ADMIN);
    const tokens: unknown[] = [];
    let body: unknown;
    server.use(
      http.get(apiUrl('/org/tokens'), () => HttpResponse.json(tokens)),
      http.post(apiUrl('/org/tokens'), async ({ request }) => {
        body = await request.json();
        tokens.push(TOKEN);
        return HttpResponse.json({ ...TOKEN, token: 'hr_abc1234_full_secret_value' }, { status: 201 });
      }),
    );
    const { user } = renderRoutes(routes, '/settings/tokens');
    expect(await screen.findByRole('region', { name: 'No API tokens' })).toBeInTheDocument();
    // An admin cannot mint an owner token (the API refuses a role above the creator's).
    expect(within(screen.getByLabelText('Role')).queryByRole('option', { name: 'Owner' })).not.toBeInTheDocument();
    await user.type(screen.getByLabelText('Token name'), 'ci');
    await user.click(screen.getByRole('button', { name: 'Create token' }));

    const shown = await screen.findByRole('region', { name: 'New API token' });
    expect(within(shown).getByLabelText('Token value')).toHaveTextContent('hr_abc1234_full_secret_value');
    expect(shown).toHaveTextContent('It is shown only once and cannot be retrieved again.');
    await user.click(within(shown).getByRole('button', { name: 'Copy token' }));
    expect(await navigator.clipboard.readText()).toBe('hr_abc1234_full_secret_value');
    expect(body).toEqual({ name: 'ci', role: 'viewer' });

    const row = await screen.findByRole('row', { name: /ci/ });
    expect(within(row).getByText('hr_abc1234…')).toBeInTheDocument();
    expect(within(row).getAllByText('Never')).toHaveLength(2);

    await user.click(within(shown).getByRole('button', { name: 'I have copied it' }));
    expect(screen.queryByRole('region', { name: 'New API token' })).not.toBeInTheDocument();
    expect(document.body).not.toHaveTextContent('hr_abc1234_full_secret_value');
  });

  it('revokes a token after confirmation', async () => {
    signedIn(SESSION);
    let revoked = false;
    vi.spyOn(window, 'confirm').mockReturnValue(true);
    server.use(
      http.get(apiUrl('/org/tokens'), () =>
        HttpResponse.json([revoked ? { ...TOKEN, revoked_at: '2026-11-21T10:00:00Z' } : TOKEN]),
      ),
      http.delete(apiUrl(`/org/tokens/${TOKEN.id}`), () => {
        revoked = true;
        return HttpResponse.json({ ...TOKEN, revoked_at: '2026-11-21T10:00:00Z' });
      }),
    );
    const { user } = renderRoutes(routes, '/settings/tokens');
    await user.click(await screen.findByRole('button', { name: 'Revoke ci' }));
    expect(await screen.findByText('Revoked 21 Nov 2026, 10:00 UTC')).toBeInTheDocument();
  });

  it('tells a viewer tokens are for admins', async () => {
    signedIn(VIEWER);
    renderRoutes(routes, '/settings/tokens');
    expect(await screen.findByRole('region', { name: 'API tokens is for admins' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Create token' })).not.toBeInTheDocument();
  });
});

describe('Settings › Audit log', () => {
  function entries(fromId: number, count: number) {
    return Array.from({ length: count }, (_, i) => ({
      id: fromId - i,
      action: i === 0 ? 'api_token.created' : 'member.invited',
      action_text: i === 0 ? 'API token: created' : 'Member: invited',
      actor_user_id: SESSION.user.id,
      actor_token_id: null,
      target_kind: 'api_token',
      target_id: TOKEN.id,
      details: { name: `entry-${fromId - i}` },
      ip: '127.0.0.1',
      created_at: '2026-11-21T10:00:00Z',
    }));
  }

  it('pages newest first with the last id as the cursor', async () => {
    signedIn(SESSION);
    const cursors: (string | null)[] = [];
    server.use(
      http.get(apiUrl('/org/audit-log'), ({ request }) => {
        const before = new URL(request.url).searchParams.get('before_id');
        cursors.push(before);
        return HttpResponse.json(before === null ? entries(60, 50) : entries(10, 10));
      }),
    );
    const { user } = renderRoutes(routes, '/settings/audit-log');
    const table = await screen.findByRole('table', { name: 'Audit log' });
    expect(within(table).getAllByRole('row')).toHaveLength(51);
    expect(within(table).getByText('name=entry-60')).toBeInTheDocument();
    // the action in words, its code kept for whoever hovers it
    expect(within(table).getByText('API token: created')).toHaveAttribute('title', 'api_token.created');
    expect(within(table).queryByText('api_token.created')).not.toBeInTheDocument();
    expect(within(table).getAllByText('Ada Lovelace').length).toBe(50);
    expect(screen.getByRole('button', { name: 'Newer' })).toBeDisabled();

    await user.click(screen.getByRole('button', { name: 'Older' }));
    expect(await screen.findByText('name=entry-10')).toBeInTheDocument();
    expect(cursors).toEqual([null, '11']);
    expect(screen.getByText('Page 2')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Older' })).toBeDisabled();

    await user.click(screen.getByRole('button', { name: 'Newer' }));
    expect(await screen.findByText('name=entry-60')).toBeInTheDocument();
    expect(screen.getByText('Page 1')).toBeInTheDocument();
  });

  it('shows an empty state', async () => {
    signedIn(SESSION);
    server.use(http.get(apiUrl('/org/audit-log'), () => HttpResponse.json([])));
    renderRoutes(routes, '/settings/audit-log');
    expect(await screen.findByRole('region', { name: 'Nothing in the audit log yet' })).toBeInTheDocument();
  });

  it('tells a viewer the audit log is for admins', async () => {
    signedIn(VIEWER);
    renderRoutes(routes, '/settings/audit-log');
    expect(await screen.findByRole('region', { name: 'The audit log is for admins' })).toBeInTheDocument();
  });
});
