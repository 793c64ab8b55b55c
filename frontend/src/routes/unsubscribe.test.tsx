import { screen } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { routes } from '@/router';
import { apiError, renderRoutes } from '@/test/render';
import { apiUrl, server } from '@/test/server';

describe('/unsubscribe (the link in the weekly email)', () => {
  it('explains first and unsubscribes only when the button is pressed, without a log-in', async () => {
    const posted = vi.fn();
    server.use(
      http.post(apiUrl('/digest/unsubscribe'), ({ request }) => {
        posted(new URL(request.url).searchParams.get('token'));
        return HttpResponse.json({
          email: 'ada@example.com',
          organization: 'Analytical Engines',
          weekly_email: false,
          already_unsubscribed: false,
        });
      }),
    );
    const { user, router } = renderRoutes(routes, '/unsubscribe?token=abc.def');
    expect(await screen.findByRole('heading', { name: 'Unsubscribe from the weekly email' })).toBeInTheDocument();
    expect(screen.getByText(/stops it for you only, in this organisation/)).toBeInTheDocument();
    expect(posted).not.toHaveBeenCalled(); // opening the page (a GET) changes nothing
    await user.click(screen.getByRole('button', { name: 'Unsubscribe' }));
    expect(await screen.findByRole('heading', { name: 'You are unsubscribed' })).toBeInTheDocument();
    expect(screen.getByRole('status')).toHaveTextContent(
      'ada@example.com gets no more weekly email from Analytical Engines.',
    );
    expect(screen.getByRole('link', { name: 'Weekly email settings' })).toHaveAttribute('href', '/settings/digest');
    expect(posted).toHaveBeenCalledWith('abc.def');
    expect(router.state.location.pathname).toBe('/unsubscribe');
  });

  it('says so when the link was used before', async () => {
    server.use(
      http.post(apiUrl('/digest/unsubscribe'), () =>
        HttpResponse.json({ email: 'ada@example.com', organization: 'AE', weekly_email: false, already_unsubscribed: true }),
      ),
    );
    const { user } = renderRoutes(routes, '/unsubscribe?token=abc.def');
    await user.click(await screen.findByRole('button', { name: 'Unsubscribe' }));
    expect(await screen.findByRole('status')).toHaveTextContent('You had already unsubscribed: ada@example.com');
  });

  it("shows the API's words for a tampered link", async () => {
    const message = "This unsubscribe link's signature does not match: the link was changed or cut short.";
    server.use(
      http.post(apiUrl('/digest/unsubscribe'), () =>
        HttpResponse.json(apiError('invalid_unsubscribe_token', message), { status: 400 }),
      ),
    );
    const { user } = renderRoutes(routes, '/unsubscribe?token=abc.xyz');
    await user.click(await screen.findByRole('button', { name: 'Unsubscribe' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(`Could not unsubscribe: ${message}`);
  });

  it('asks for the whole link when the token is missing', async () => {
    renderRoutes(routes, '/unsubscribe');
    expect(await screen.findByRole('alert')).toHaveTextContent('This link has no unsubscribe token');
    expect(screen.queryByRole('button', { name: 'Unsubscribe' })).not.toBeInTheDocument();
  });
});
