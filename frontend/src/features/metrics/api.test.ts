import { QueryClient } from '@tanstack/react-query';
import { describe, expect, it, vi } from 'vitest';
import { recordGets } from '@/test/server';
import { chartPoints, contentWidthFor, prefetchMetricsForAddress, takeEarlyView } from './api';

function client() {
  // the tests check which requests a prefetch starts (recordGets answers them), not what is made of the answers
  return new QueryClient({ defaultOptions: { queries: { retry: false } } });
}

describe('prefetchMetricsForAddress', () => {
  it('starts the node panels and the overview for a Metrics address, with the points and window the view takes', async () => {
    const asked = recordGets();
    const queryClient = client();
    prefetchMetricsForAddress(queryClient, { pathname: '/clusters/c-1/metrics', search: '?node=n-2&range=24h' }, 1280);
    const keys = queryClient.getQueryCache().findAll().map((q) => q.queryKey);
    expect(keys).toHaveLength(2);
    const early = takeEarlyView('c-1', 'n-2', '24h');
    expect(early?.points).toBe(chartPoints(contentWidthFor(1280)));
    expect(Date.parse(early!.window.end) - Date.parse(early!.window.start)).toBe(24 * 3600 * 1000);
    expect(keys).toContainEqual(['metrics', 'c-1', 'node', 'n-2', early!.window, false, early!.points]);
    expect(keys).toContainEqual(['metrics', 'c-1', 'overview', early!.window]);
    // taken once: a later visit of the tab measures itself again
    expect(takeEarlyView('c-1', 'n-2', '24h')).toBeUndefined();
    await vi.waitFor(() => expect(asked.sort()).toEqual(['/clusters/c-1/metrics', '/clusters/c-1/metrics/overview']));
  });

  it('starts nothing for another page of the cluster', () => {
    const queryClient = client();
    prefetchMetricsForAddress(queryClient, { pathname: '/clusters/c-1/findings', search: '' }, 1280);
    expect(queryClient.getQueryCache().findAll()).toHaveLength(0);
    expect(takeEarlyView('c-1', undefined, '6h')).toBeUndefined();
  });
});

describe('contentWidthFor', () => {
  it('is the page box less its padding: 72rem at most, 1.5rem a side, 0.75rem on a phone', () => {
    expect(contentWidthFor(1440)).toBe(1152 - 48);
    expect(contentWidthFor(1024)).toBe(1024 - 48);
    expect(contentWidthFor(390)).toBe(390 - 24);
  });
});
