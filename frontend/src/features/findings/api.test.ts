import { QueryClient } from '@tanstack/react-query';
import { describe, expect, it, vi } from 'vitest';
import { recordGets } from '@/test/server';
import { prefetchFindingForAddress } from './api';

describe('prefetchFindingForAddress', () => {
  it("starts a finding's page's two requests, under the keys its page reads", async () => {
    const asked = recordGets();
    const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    prefetchFindingForAddress(queryClient, '/clusters/c-1/findings/f-9');
    const keys = queryClient.getQueryCache().findAll().map((q) => q.queryKey);
    expect(keys).toEqual([
      ['finding', 'f-9'],
      ['finding', 'f-9', 'evidence-series'],
    ]);
    await vi.waitFor(() => expect(asked.sort()).toEqual(['/findings/f-9', '/findings/f-9/evidence/series']));
  });

  it('starts nothing for the findings list or another page', () => {
    const queryClient = new QueryClient();
    prefetchFindingForAddress(queryClient, '/clusters/c-1/findings');
    prefetchFindingForAddress(queryClient, '/clusters/c-1/metrics');
    expect(queryClient.getQueryCache().findAll()).toHaveLength(0);
  });
});
