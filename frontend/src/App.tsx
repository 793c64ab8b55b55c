import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import { RouterProvider } from 'react-router';
import { CSRF_COOKIE, readCookie } from '@/api/client';
import { createQueryClient } from '@/api/query-client';
import { fetchSession, sessionQueryKey } from '@/features/auth/api';
import { prefetchRoute } from '@/lib/routePrefetch';
import { createRouter, routes } from '@/router';

/** The app's query client, with the session's and the opened page's first requests started (main.tsx makes it before
 * React draws anything). */
export function createAppQueryClient(): QueryClient {
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

export { createRouter };

/** The app, given its query client and router, both made as the entry script runs (main.tsx): the first requests are
 * then sent as soon as the script has run, not once React's first render (about 100 ms of the main thread on a
 * 2-core machine) has ended; an API call's fetch starts after a microtask (openapi-fetch's middleware), which
 * waits for the task under way. */
export function App({ queryClient, router }: { queryClient: QueryClient; router: ReturnType<typeof createRouter> }) {
  return (
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  );
}
