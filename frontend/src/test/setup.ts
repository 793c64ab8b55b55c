import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { server } from './server';

// Pages are lazy route chunks (src/lib/lazyPage.ts): a test's first render of a page waits for its module to be
// transformed and imported, which on 2 shared cores under a full run can pass findBy*'s 1 s default.
configure({ asyncUtilTimeout: 5_000 });

// Every request in a unit test goes through MSW at the network boundary; an unhandled one fails the test. MSW's
// 'error' strategy only makes the page's fetch fail (which a page may show as an error and the test not notice),
// so each unhandled request is also collected and the test that made it fails after it ran.
const unhandled: string[] = [];
beforeAll(() =>
  server.listen({
    onUnhandledRequest(request, print) {
      unhandled.push(`${request.method} ${new URL(request.url).pathname}`);
      print.error();
    },
  }),
);
// A browser that logged in holds the CSRF cookie beside its HttpOnly session cookie, and the front end asks
// /auth/me only then (features/auth/api.ts fetchSession): every test starts as that browser, and the API stand-in
// (each test's /auth/me handler) says whether the session is valid. A visitor's test clears the cookie.
beforeEach(() => {
  document.cookie = 'headroom_csrf=test-csrf-token; path=/';
});
// What React says on console.error is a defect a user sees (markup a browser rearranges, such as text inside a <tr>,
// which the clusters table once showed as a line of code in every row): a test during which it is said fails.
const consoleErrors: string[] = [];
const originalError = console.error.bind(console);
console.error = (...args: unknown[]) => {
  // React's messages are printf-like ('In HTML, %s cannot be a child of <%s>.'): said with their arguments
  const [first, ...rest] = args.map(String);
  const said = (first ?? '').replace(/%s/g, () => rest.shift() ?? '%s');
  consoleErrors.push([said, ...rest].join(' ').slice(0, 300));
  originalError(...args);
};
// A page's queries start in effects that React runs after the paint a findBy* resolved on, so a test can end before
// its last request leaves. Unmount first and let those requests reach the test's own handlers; then reset them, so a
// late request is neither unanswered in its own test nor blamed on the next one.
afterEach(async () => {
  cleanup();
  await new Promise((resolve) => setTimeout(resolve, 0));
  await new Promise((resolve) => setTimeout(resolve, 0));
  const missed = unhandled.splice(0);
  server.resetHandlers();
  document.cookie.split(';').forEach((c) => {
    const name = c.split('=')[0]?.trim();
    if (name) document.cookie = `${name}=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/`;
  });
  const said = consoleErrors.splice(0);
  if (missed.length > 0) throw new Error(`requests no handler answered: ${[...new Set(missed)].join(', ')}`);
  if (said.length > 0) throw new Error(`console.error during the test: ${said[0]}`);
});
afterAll(() => server.close());

// jsdom has no layout engine; Recharts' ResponsiveContainer needs a ResizeObserver to exist.
class NoopResizeObserver {
  observe() {}
  unobserve() {}
  disconnect() {}
}
globalThis.ResizeObserver ??= NoopResizeObserver as unknown as typeof ResizeObserver;
