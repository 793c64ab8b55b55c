import { http, HttpResponse } from 'msw';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createQueryClient } from '@/api/query-client';
import { apiUrl, server } from '@/test/server';

const NOW = Date.parse('2026-11-30T10:17:42Z');

/** Answer every GET with the address it asked for, and record each address the network saw (path and query). */
function network(): string[] {
  const seen: string[] = [];
  server.use(
    http.get(apiUrl('/*'), ({ request }) => {
      const url = new URL(request.url);
      const asked = url.pathname.replace(/^\/api\/v1/, '') + url.search;
      seen.push(asked);
      // the source lists are lists (an overview's badges are made of them)
      return HttpResponse.json(url.pathname.startsWith('/api/v1/sources/') ? [] : { asked });
    }),
  );
  return seen;
}

// Each test is a page load: the API client's record of what the page started (api/client.ts) is the module's own,
// so every test imports the modules afresh.
async function pageLoad() {
  vi.resetModules();
  const [{ startFirstRequests }, { api, EARLY_KEEP_MS }, { prefetchRoute }, { routes }] = await Promise.all([
    import('@/first-requests'), import('@/api/client'), import('@/lib/routePrefetch'), import('@/router'),
  ]);
  /** The app's own first requests for an address (router.tsx's prefetch, as main.tsx starts them). */
  const appStarts = (pathname: string, search = '') => {
    const queryClient = createQueryClient();
    queryClient.setDefaultOptions({ queries: { ...queryClient.getDefaultOptions().queries, retry: false } });
    prefetchRoute(routes, { queryClient, location: { pathname, search }, role: () => Promise.resolve('owner') });
    return queryClient;
  };
  return { startFirstRequests, api, EARLY_KEEP_MS, appStarts };
}

const settled = (queryClient: ReturnType<typeof createQueryClient>) =>
  queryClient.getQueryCache().getAll().every((query) => query.state.fetchStatus === 'idle' && query.state.status !== 'pending');

describe("the page's first requests, started before the app's code (first-requests.ts, boot.ts)", () => {
  beforeEach(() => {
    // the metrics window is the minute of NOW for both; timers advance with real time unless a test jumps them
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'], now: NOW, shouldAdvanceTime: true });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([
    ['a cluster overview', '/clusters/c-1', '', 9],
    ['a Metrics tab', '/clusters/c-1/metrics', '', 3],
    ['a node and range of a Metrics tab', '/clusters/c-1/metrics', '?node=n-2&range=7d', 3],
    ['a finding', '/clusters/c-1/findings/f%2F1', '', 3],
  ])('starts %s’s requests, and the app takes each answer instead of asking again', async (_, pathname, search, count) => {
    const { startFirstRequests, appStarts } = await pageLoad();
    const seen = network();
    const width = document.documentElement.clientWidth; // what router.tsx reads too
    startFirstRequests({ pathname, search }, width, Date.now());
    await vi.waitFor(() => expect(seen).toHaveLength(count));
    const early = [...seen];
    expect(early).toContain('/clusters/c-1');

    const queryClient = appStarts(pathname, search);
    await vi.waitFor(() => expect(settled(queryClient)).toBe(true));
    // the app's requests were these, each answered by the request already under way: no second one
    expect(seen).toEqual(early);
    const answered = queryClient.getQueryCache().getAll().map((query) => (query.state.data as { asked?: string }).asked);
    // (the source lists answer lists; an overview's source badges are made of them, not asked for)
    expect(answered.filter((asked) => asked !== undefined).sort())
      .toEqual(early.filter((asked) => !asked.startsWith('/sources/')).sort());
  });

  it('starts nothing once the app has asked (its script ran first), without a session, for an address it cannot decode, or for a page whose requests need more than the address', async () => {
    const { startFirstRequests, api } = await pageLoad();
    const seen = network();
    startFirstRequests({ pathname: '/clusters', search: '' }, 1280, Date.now());
    startFirstRequests({ pathname: '/settings/tokens', search: '' }, 1280, Date.now());
    // an address whose cluster or finding is not valid percent-encoding (typed or pasted wrong): no request, no throw
    for (const pathname of ['/clusters/%E0%A4%A', '/clusters/%zz/metrics', '/clusters/%zz/findings/%E0%A4%A']) {
      expect(() => startFirstRequests({ pathname, search: '' }, 1280, Date.now())).not.toThrow();
    }
    document.cookie = 'headroom_csrf=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/';
    startFirstRequests({ pathname: '/clusters/c-1', search: '' }, 1280, Date.now());
    document.cookie = 'headroom_csrf=test-csrf-token; path=/';
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toEqual([]);

    await api.GET('/api/v1/clusters/{cluster_id}', { params: { path: { cluster_id: 'c-0' } } });
    startFirstRequests({ pathname: '/clusters/c-1/config', search: '' }, 1280, Date.now());
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toEqual(['/clusters/c-0']);
  });

  it('gives an answer once', async () => {
    const { startFirstRequests, api } = await pageLoad();
    const seen = network();
    startFirstRequests({ pathname: '/clusters/c-2/config', search: '' }, 1280, Date.now());
    await vi.waitFor(() => expect(seen).toEqual(['/clusters/c-2']));
    const ask = () => api.GET('/api/v1/clusters/{cluster_id}', { params: { path: { cluster_id: 'c-2' } } });
    expect((await ask()).data).toEqual({ asked: '/clusters/c-2' });
    expect(seen).toHaveLength(1); // taken
    await ask();
    expect(seen).toHaveLength(2); // a second ask goes to the network
  });

  it('drops an answer not taken within EARLY_KEEP_MS: a later ask goes to the network', async () => {
    const { startFirstRequests, api, EARLY_KEEP_MS } = await pageLoad();
    const seen = network();
    startFirstRequests({ pathname: '/clusters/c-3/config', search: '' }, 1280, Date.now());
    await vi.waitFor(() => expect(seen).toEqual(['/clusters/c-3']));
    vi.advanceTimersByTime(EARLY_KEEP_MS + 1);
    await api.GET('/api/v1/clusters/{cluster_id}', { params: { path: { cluster_id: 'c-3' } } });
    expect(seen).toEqual(['/clusters/c-3', '/clusters/c-3']);
  });
});
