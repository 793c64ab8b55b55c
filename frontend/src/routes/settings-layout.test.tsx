import { screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { routes } from '@/router';
import { renderRoutes, SESSION } from '@/test/render';
import { apiUrl, server } from '@/test/server';

// On a phone the settings nav collapses to a button (the CSS hides the links unless the nav is open; jsdom applies
// no CSS, so the state is read from the button and the nav's class).
describe('Settings nav on a narrow screen', () => {
  it('is a button naming the current page that opens the list, and a link followed closes it', async () => {
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/org/members'), () => HttpResponse.json([])),
      http.get(apiUrl('/org/tokens'), () => HttpResponse.json([])),
    );
    const { user, router } = renderRoutes(routes, '/settings/members');
    const nav = await screen.findByRole('navigation', { name: 'Settings' });
    const toggle = within(nav).getByRole('button', { name: 'Settings: Members' });
    expect(toggle).toHaveAttribute('aria-expanded', 'false');
    expect(nav).not.toHaveClass('settings__nav--open');

    await user.click(toggle);
    expect(toggle).toHaveAttribute('aria-expanded', 'true');
    expect(nav).toHaveClass('settings__nav--open');
    expect(document.getElementById(toggle.getAttribute('aria-controls') ?? '')).toContainElement(
      within(nav).getByRole('link', { name: 'API tokens' }),
    );

    await user.click(within(nav).getByRole('link', { name: 'API tokens' }));
    const closed = await within(nav).findByRole('button', { name: 'Settings: API tokens' });
    expect(router.state.location.pathname).toBe('/settings/tokens');
    expect(closed).toHaveAttribute('aria-expanded', 'false');
    expect(nav).not.toHaveClass('settings__nav--open');
  });
});
