import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api } from '@/api/client';
import { unwrap } from '@/api/errors';
import type { paths } from '@/api/schema';
import type { Change } from '@/lib/change';

type Route = paths['/api/v1/clusters/{cluster_id}/what-if']['post'];
export type WhatIfAnswer = Route['responses'][200]['content']['application/json'];
export type WhatIfCeiling = WhatIfAnswer['ceilings'][number];
export type WhatIfFinding = WhatIfAnswer['resolved'][number];
export type WhatIfProjection = WhatIfAnswer['projections'][number];

/**
 * The answer for `changes` (nothing is stored, so it is a query: the same changes again come from the cache, and
 * the previous answer stays on screen while the next one is computed). Disabled while `changes` is null.
 */
export function useWhatIf(clusterId: string, changes: Change[] | null) {
  return useQuery({
    queryKey: ['clusters', clusterId, 'what-if', changes],
    queryFn: ({ signal }) =>
      unwrap(
        api.POST('/api/v1/clusters/{cluster_id}/what-if', {
          params: { path: { cluster_id: clusterId } },
          body: { changes: changes ?? [] },
          signal,
        }),
      ),
    enabled: changes !== null && changes.length > 0,
    placeholderData: keepPreviousData,
    staleTime: 60_000,
    retry: false,
  });
}
