import { QueryClient } from '@tanstack/react-query';
import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { activeFindingsQuery } from '@/features/findings/api';
import { tokensQuery } from '@/features/org/api';
import { routes } from '@/router';
import { apiUrl, recordGets, server } from '@/test/server';
import { prefetchRoute } from '@/lib/routePrefetch';

function start(pathname: string, role: string | null = 'owner') {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  prefetchRoute(routes, { queryClient, location: { pathname, search: '' }, role: () => Promise.resolve(role) });
  return queryClient;
}

describe("the routes' prefetch (prefetchRoute over router.tsx)", () => {
  it("starts a cluster overview's requests, and its findings and ceilings once the cluster says it was advised on", async () => {
    const asked = recordGets();
    server.use(
      http.get(apiUrl('/clusters/c-1'), () => {
        asked.push('/clusters/c-1');
        return HttpResponse.json({ id: 'c-1', is_demo: false, advised_at: '2026-11-29T12:00:00Z' });
      }),
    );
    const queryClient = start('/clusters/c-1');
    await vi.waitFor(() => expect(asked).toHaveLength(9));
    expect([...asked].sort()).toEqual([
      '/clusters/c-1', // once: the layout's prefetch and the overview's fetchQuery share the request
      '/clusters/c-1/apply-settings',
      '/clusters/c-1/changes',
      '/clusters/c-1/findings',
      '/clusters/c-1/nodes',
      '/clusters/c-1/projections',
      '/clusters/c-1/recommendation-preferences',
      '/sources/aws',
      '/sources/prometheus',
    ].sort());
    // under the key the overview's findings cards read
    await vi.waitFor(() => expect(queryClient.getQueryState(activeFindingsQuery('c-1').queryKey)?.status).toBe('success'));
  });

  it("asks a never-advised cluster's overview for no findings or ceilings (the page shows a notice instead)", async () => {
    const asked = recordGets();
    server.use(http.get(apiUrl('/clusters/c-2'), () => HttpResponse.json({ id: 'c-2', is_demo: true, advised_at: null })));
    start('/clusters/c-2');
    await vi.waitFor(() => expect(asked).toContain('/sources/prometheus'));
    expect(asked.filter((p) => p.includes('findings') || p.includes('projections'))).toEqual([]);
  });

  it('asks for the API tokens for an admin or owner only, once the session has said the role', async () => {
    const asked = recordGets();
    const owner = start('/settings/tokens', 'owner');
    await vi.waitFor(() => expect(owner.getQueryState(tokensQuery().queryKey)?.status).toBe('success'));
    const viewer = start('/settings/tokens', 'viewer');
    const signedOut = start('/settings/tokens', null);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(asked).toEqual(['/org/tokens']);
    expect(viewer.getQueryState(tokensQuery().queryKey)).toBeUndefined();
    expect(signedOut.getQueryState(tokensQuery().queryKey)).toBeUndefined();
  });

  it('starts the clusters list and the fleet for /clusters, and nothing for a page without a prefetch', async () => {
    const asked = recordGets();
    start('/clusters');
    start('/decides');
    await vi.waitFor(() => expect(asked).toHaveLength(2));
    expect([...asked].sort()).toEqual(['/clusters', '/fleet']);
  });
});
