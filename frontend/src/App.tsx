import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { RouterProvider } from 'react-router';
import { createQueryClient } from '@/api/query-client';
import { sessionQueryKey } from '@/features/auth';
import { createRouter } from '@/router';

function createAppQueryClient(): QueryClient {
  // A 401 from any request means the session is gone: forget it so auth routes send people to /login.
  const client: QueryClient = createQueryClient({
    onUnauthenticated: () => client.setQueryData(sessionQueryKey, null),
  });
  return client;
}

export function App() {
  const [queryClient] = useState(createAppQueryClient);
  const [router] = useState(createRouter);
  return (
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  );
}
