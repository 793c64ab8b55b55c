import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { createQueryClient } from '@/api/query-client';
import { sourceBadgesQuery } from '@/features/clusters/api';
import { activeFindingsQuery } from '@/features/findings/api';
import { tokensQuery } from '@/features/org/api';
import { routes } from '@/router';
import { apiUrl, recordGets, server } from '@/test/server';
import { prefetchRoute } from '@/lib/routePrefetch';

function start(pathname: string, role: string | null = 'owner') {
  // the app's client (answers fresh for 30 s), without retries
  const queryClient = createQueryClient();
  queryClient.setDefaultOptions({ queries: { ...queryClient.getDefaultOptions().queries, retry: false } });
  prefetchRoute(routes, { queryClient, location: { pathname, search: '' }, role: () => Promise.resolve(role) });
  return queryClient;
}

describe("the routes' prefetch (prefetchRoute over router.tsx)", () => {
  it("starts every request of a cluster overview at once, not its findings, ceilings and sources after the cluster", async () => {
    const asked = recordGets();
    let answerCluster: () => void = () => undefined;
    const clusterAnswered = new Promise<void>((resolve) => (answerCluster = resolve));
    server.use(
      http.get(apiUrl('/clusters/c-1'), async () => {
        asked.push('/clusters/c-1');
        await clusterAnswered; // held until every other request has been asked
        return HttpResponse.json({ id: 'c-1', is_demo: false, advised_at: '2026-11-29T12:00:00Z' });
      }),
      ...['/sources/aws', '/sources/prometheus'].map((path) =>
        http.get(apiUrl(path), () => {
          asked.push(path);
          return HttpResponse.json([]);
        }),
      ),
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
    answerCluster();
    // under the key the overview's findings cards read
    await vi.waitFor(() => expect(queryClient.getQueryState(activeFindingsQuery('c-1').queryKey)?.status).toBe('success'));
    // the badges are made of the lists already asked for: no second request for either
    await vi.waitFor(() => expect(queryClient.getQueryState(sourceBadgesQuery('c-1', false).queryKey)?.status).toBe('success'));
    expect(asked.filter((p) => p.startsWith('/sources/'))).toHaveLength(2);
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
