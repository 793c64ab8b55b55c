import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { server } from './server';

// Pages are lazy route chunks (src/lib/lazyPage.ts): a test's first render of a page waits for its module to be
// transformed and imported, which on 2 shared cores under a full run can pass findBy*'s 1 s default.
configure({ asyncUtilTimeout: 5_000 });

// Every request in a unit test goes through MSW at the network boundary; an unhandled one fails the test.
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
// A browser that logged in holds the CSRF cookie beside its HttpOnly session cookie, and the front end asks
// /auth/me only then (features/auth/api.ts fetchSession): every test starts as that browser, and the API stand-in
// (each test's /auth/me handler) says whether the session is valid. A visitor's test clears the cookie.
beforeEach(() => {
  document.cookie = 'headroom_csrf=test-csrf-token; path=/';
});
afterEach(() => {
  server.resetHandlers();
  cleanup();
  document.cookie.split(';').forEach((c) => {
    const name = c.split('=')[0]?.trim();
    if (name) document.cookie = `${name}=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/`;
  });
});
afterAll(() => server.close());

// jsdom has no layout engine; Recharts' ResponsiveContainer needs a ResizeObserver to exist.
class NoopResizeObserver {
  observe() {}
  unobserve() {}
  disconnect() {}
}
globalThis.ResizeObserver ??= NoopResizeObserver as unknown as typeof ResizeObserver;
