import { QueryClient } from '@tanstack/react-query';
import { describe, expect, it, vi } from 'vitest';
import { recordGets } from '@/test/server';
import { clusterQueryKey, prefetchClusterForAddress } from './api';

describe('prefetchClusterForAddress', () => {
  it("starts the cluster's request for any of its pages, under the key useCluster reads", async () => {
    const asked = recordGets();
    for (const pathname of ['/clusters/c-1', '/clusters/c-1/', '/clusters/c-1/metrics', '/clusters/c-1/findings/f-2']) {
      const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
      prefetchClusterForAddress(queryClient, pathname);
      expect(queryClient.getQueryCache().findAll().map((q) => q.queryKey), pathname).toEqual([clusterQueryKey('c-1')]);
    }
    await vi.waitFor(() => expect(asked).toEqual(Array(4).fill('/clusters/c-1')));
  });

  it('starts nothing for the clusters list or the settings', () => {
    const queryClient = new QueryClient();
    prefetchClusterForAddress(queryClient, '/clusters');
    prefetchClusterForAddress(queryClient, '/settings/sources');
    expect(queryClient.getQueryCache().findAll()).toHaveLength(0);
  });
});
