import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { RouterProvider } from 'react-router';
import { CSRF_COOKIE, readCookie } from '@/api/client';
import { createQueryClient } from '@/api/query-client';
import { fetchSession, sessionQueryKey } from '@/features/auth/api';
import { prefetchRoute } from '@/lib/routePrefetch';
import { createRouter, routes } from '@/router';

function createAppQueryClient(): QueryClient {
  // A 401 from any request means the session is gone: forget it so auth routes send people to /login.
  const client: QueryClient = createQueryClient({
    onUnauthenticated: () => client.setQueryData(sessionQueryKey, null),
  });
  // The session is asked for at once, while the first page's code is still loading (the router draws nothing
  // until it has arrived), rather than when the layout that needs it is first drawn: one step less before a
  // signed-in page's own requests. useSession finds it under way.
  void client.prefetchQuery({ queryKey: sessionQueryKey, queryFn: fetchSession });
  // Likewise the first requests of the page the address opens (each route's handle.prefetch, router.tsx): the
  // cluster a cluster's page opens on, a Metrics tab's data, a finding with its evidence, a list's rows, for a
  // browser with a session (the API sets its CSRF cookie with it): a visitor's would answer 401, which the browser
  // logs as errors. Not the chart's code: a chart's first paint is plain SVG (components/TimeSeriesChart/
  // PlainChart.tsx), and Recharts is fetched and run once that is on screen, off the way to the first chart line.
  if (readCookie(CSRF_COOKIE) !== undefined) {
    prefetchRoute(routes, {
      queryClient: client,
      location: window.location,
      role: () => client.fetchQuery({ queryKey: sessionQueryKey, queryFn: fetchSession }).then((s) => s?.role ?? null, () => null),
    });
  }
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
