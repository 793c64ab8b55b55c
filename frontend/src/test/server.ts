import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';

// The clusters page asks for the fleet overview next to the list; tests that do not look at it get an empty one.
const EMPTY_FLEET = {
  items: [],
  total_spend_usd: 0,
  total_savings_usd: 0,
  window_start: '2026-11-01T12:00:00Z',
  window_end: '2026-11-02T12:00:00Z',
  score_definition: 'Headroom score = 100 - the highest peak use of any ceiling over the last 24 hours.',
};

// The decides page asks for each rule's record; tests that do not look at it get none.
export const server = setupServer(
  http.get('*/api/v1/fleet', () => HttpResponse.json(EMPTY_FLEET)),
  http.get('*/api/v1/rules', () => HttpResponse.json({ items: [], days: 90 })),
);

/** The absolute URL of an API path, as the client requests it under jsdom. */
export function apiUrl(path: string): string {
  return `${window.location.origin}/api/v1${path}`;
}

/**
 * Answer every GET of the API with `{}` and record the paths asked, for tests of code that starts requests (a
 * prefetch) and checks which ones it started, not what a page makes of the answers.
 */
export function recordGets(): string[] {
  const paths: string[] = [];
  server.use(
    http.get(apiUrl('/*'), ({ request }) => {
      const url = new URL(request.url);
      paths.push(url.pathname.replace(/^\/api\/v1/, ''));
      return HttpResponse.json({});
    }),
  );
  return paths;
}
