import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';

/** Cookie the backend sets next to the HttpOnly session cookie; readable by JS on purpose. */
export const CSRF_COOKIE = 'headroom_csrf';
export const CSRF_HEADER = 'X-CSRF-Token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Return the value of cookie `name`, or undefined when it is not set. */
export function readCookie(name: string, cookies: string = document.cookie): string | undefined {
  for (const part of cookies.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) {
      return decodeURIComponent(part.slice(eq + 1).trim());
    }
  }
  return undefined;
}

// Double-submit CSRF: every cookie-authenticated write echoes the CSRF cookie in a header.
// Signup and login don't need it, but sending it when present is harmless.
const csrfMiddleware: Middleware = {
  onRequest({ request }) {
    if (!SAFE_METHODS.has(request.method.toUpperCase())) {
      const token = readCookie(CSRF_COOKIE);
      if (token) request.headers.set(CSRF_HEADER, token);
    }
    return request;
  },
};

export const api = createClient<paths>({
  // An absolute base keeps Request() happy outside a browser too (tests run under jsdom + Node's fetch).
  baseUrl: globalThis.location?.origin ?? '',
  credentials: 'same-origin',
  // Look fetch up per call rather than capturing it at import time, so a test's network
  // interceptor installed later still sees every request.
  fetch: (request: Request) => globalThis.fetch(request),
});
api.use(csrfMiddleware);
