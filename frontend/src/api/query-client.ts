import { MutationCache, QueryCache, QueryClient } from '@tanstack/react-query';
import { ApiError } from './errors';

export interface QueryClientOptions {
  /** Called when any request answers 401 not_authenticated (e.g. the session expired). */
  onUnauthenticated?: () => void;
}

function isUnauthenticated(error: unknown): boolean {
  return error instanceof ApiError && error.status === 401 && error.code === 'not_authenticated';
}

export function createQueryClient({ onUnauthenticated }: QueryClientOptions = {}): QueryClient {
  const onError = (error: unknown) => {
    if (isUnauthenticated(error)) onUnauthenticated?.();
  };
  return new QueryClient({
    queryCache: new QueryCache({ onError }),
    mutationCache: new MutationCache({ onError }),
    defaultOptions: {
      queries: {
        staleTime: 30_000,
        refetchOnWindowFocus: false,
        // A 4xx will answer the same way again; only retry failures that may be transient.
        retry: (failures, error) => {
          if (error instanceof ApiError && error.status >= 400 && error.status < 500) return false;
          return failures < 2;
        },
      },
      mutations: { retry: false },
    },
  });
}
