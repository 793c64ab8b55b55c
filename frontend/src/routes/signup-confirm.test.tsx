import { screen } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { routes } from '@/router';
import { apiError, renderRoutes, SESSION } from '@/test/render';
import { apiUrl, server } from '@/test/server';

const notAuthenticated = () =>
  HttpResponse.json(apiError('not_authenticated', 'Log in to continue.'), { status: 401 });

describe('sign-up by email link', () => {
  it('answers a sign-up with "check your email", never a session', async () => {
    const message = 'Check your email: we have sent you a link to finish creating your account.';
    server.use(
      http.get(apiUrl('/auth/me'), notAuthenticated),
      http.post(apiUrl('/auth/signup'), () => HttpResponse.json({ message }, { status: 202 })),
    );
    const { router, user } = renderRoutes(routes, '/signup');
    await user.type(await screen.findByLabelText('Email'), 'ada@example.com');
    await user.type(screen.getByLabelText('Password'), 'correct horse battery');
    await user.type(screen.getByLabelText('Organisation name'), 'Analytical Engines');
    await user.click(screen.getByRole('button', { name: 'Create account' }));

    expect(await screen.findByRole('heading', { name: 'Check your email' })).toBeInTheDocument();
    expect(screen.getByText(message)).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/signup');
  });

  it('follows the link once, logs in and opens the clusters', async () => {
    const sent = vi.fn();
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/clusters'), () => HttpResponse.json({ items: [], total: 0 })),
      http.post(apiUrl('/auth/signup/confirm'), async ({ request }) => {
        sent(await request.json());
        return HttpResponse.json(SESSION, { status: 201 });
      }),
    );
    const { router } = renderRoutes(routes, '/signup/confirm?token=abc%2Bdef%3D');
    expect(await screen.findByRole('heading', { name: 'Clusters', level: 1 })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/clusters');
    expect(sent).toHaveBeenCalledTimes(1);
    expect(sent).toHaveBeenCalledWith({ token: 'abc+def=' });
  });

  it("shows the API's message for a stale link, with the ways on", async () => {
    server.use(
      http.post(apiUrl('/auth/signup/confirm'), () =>
        HttpResponse.json(
          apiError('signup_link_invalid', 'This sign-up link is invalid or has expired; sign up again.'),
          { status: 404 },
        ),
      ),
    );
    renderRoutes(routes, '/signup/confirm?token=old');
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'This sign-up link is invalid or has expired; sign up again.',
    );
    expect(screen.getByRole('link', { name: 'Sign up again' })).toHaveAttribute('href', '/signup');
    expect(screen.getByRole('link', { name: 'log in' })).toHaveAttribute('href', '/login');
  });
});
