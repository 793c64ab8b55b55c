import { screen } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { routes } from '@/router';
import { apiError, renderRoutes, SESSION } from '@/test/render';
import { apiUrl, server } from '@/test/server';

describe('accepting an invitation', () => {
  it('asks for a password, joins with the token and opens the clusters', async () => {
    const sent = vi.fn();
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/clusters'), () => HttpResponse.json({ items: [], total: 0 })),
      http.post(apiUrl('/auth/accept-invitation'), async ({ request }) => {
        sent(await request.json());
        return HttpResponse.json(SESSION);
      }),
    );
    const { router, user } = renderRoutes(routes, '/accept-invitation?token=inv%2Btoken%3D');
    expect(await screen.findByRole('heading', { name: 'Join your team on Headroom' })).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Join the organisation' }));
    expect(screen.getByText('Enter a password.')).toBeInTheDocument();
    expect(sent).not.toHaveBeenCalled();
    await user.type(screen.getByLabelText('Your name (optional)'), 'Grace');
    await user.type(screen.getByLabelText('Password'), 'a long enough password');
    await user.click(screen.getByRole('button', { name: 'Join the organisation' }));
    expect(await screen.findByRole('heading', { name: 'Clusters', level: 1 })).toBeInTheDocument();
    expect(sent).toHaveBeenCalledWith({ token: 'inv+token=', full_name: 'Grace', password: 'a long enough password' });
    expect(router.state.location.pathname).toBe('/clusters');
  });

  it('shows why an expired invitation cannot be used, and a link without its token', async () => {
    server.use(
      http.post(apiUrl('/auth/accept-invitation'), () =>
        HttpResponse.json(apiError('not_found', 'This invitation is invalid or has expired.'), { status: 404 }),
      ),
    );
    const { user } = renderRoutes(routes, '/accept-invitation?token=expired-token');
    await user.type(await screen.findByLabelText('Password'), 'a long enough password');
    await user.click(screen.getByRole('button', { name: 'Join the organisation' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('This invitation is invalid or has expired.');
  });
});

describe('an invitation link without its token', () => {
  it('says so in words', async () => {
    renderRoutes(routes, '/accept-invitation');
    expect(await screen.findByRole('heading', { name: 'This invitation link is incomplete' })).toBeInTheDocument();
  });
});
