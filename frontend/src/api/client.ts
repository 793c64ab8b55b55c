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

/**
 * Requests a page's first-requests script (src/boot.ts) started before the app's code had arrived, by URL. The
 * app's first GET of the same URL takes the answer under way instead of asking again, once. One not taken within
 * EARLY_KEEP_MS (its address was not the one the app asked for, e.g. a minute turned in between) is dropped and its
 * body cancelled: an answer nobody reads would keep its connection open.
 */
const early = new Map<string, Promise<Response>>();
export const EARLY_KEEP_MS = 5_000;
/** Whether the app has made a request: from then on the script's are not started (the app has asked already). */
let appAsked = false;

function takeEarly(request: Request): Promise<Response> | undefined {
  appAsked = true;
  if (request.method !== 'GET') return undefined;
  const hit = early.get(request.url);
  early.delete(request.url);
  return hit;
}

function startEarly(request: Request) {
  if (appAsked || request.method !== 'GET' || early.has(request.url)) return;
  const response = globalThis.fetch(request);
  // a failure nobody takes is not an unhandled rejection; the app's call that takes it still sees it
  response.catch(() => undefined);
  early.set(request.url, response);
  setTimeout(() => {
    if (early.get(request.url) !== response) return;
    early.delete(request.url);
    void response.then((answer) => answer.body?.cancel(), () => undefined);
  }, EARLY_KEEP_MS);
}

const clientOptions = {
  // An absolute base keeps Request() happy outside a browser too (tests run under jsdom + Node's fetch).
  baseUrl: globalThis.location?.origin ?? '',
  credentials: 'same-origin',
} as const;

export const api = createClient<paths>({
  ...clientOptions,
  // Look fetch up per call rather than capturing it at import time, so a test's network
  // interceptor installed later still sees every request.
  fetch: (request: Request) => takeEarly(request) ?? globalThis.fetch(request),
});
api.use(csrfMiddleware);

/** The client the API's calls are made with (`api`, or `earlyClient`). */
export type ApiClient = typeof api;

/**
 * A client whose GETs are sent at once and kept for the app's `api` to take (src/boot.ts): the URL is built the way
 * `api` builds it (same base, same query serialiser), so the app's identical call finds it. What its own calls
 * resolve to is nothing: the answer is the app's to read.
 */
export const earlyClient: ApiClient = createClient<paths>({
  ...clientOptions,
  fetch: (request: Request) => {
    startEarly(request);
    return Promise.resolve(new Response(null, { status: 204 }));
  },
});
