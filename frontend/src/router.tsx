import { createBrowserRouter, Navigate, type RouteObject } from 'react-router';
import { LoadingState } from '@/components/LoadingState';
import { awsConnectionsQuery, prometheusSourcesQuery } from '@/api/source-lists';
import { clusterApplySettingsQuery } from '@/features/apply/api';
import { changesQuery } from '@/features/changes/api';
import {
  clusterPreferencesQuery,
  clusterQuery,
  clustersQuery,
  fleetQuery,
  nodesQuery,
  prefetchClusterForAddress,
  sourceBadgesQuery,
} from '@/features/clusters/api';
import { ACTIVE_FINDINGS, activeFindingsQuery, findingsQuery, prefetchFindingForAddress } from '@/features/findings/api';
import { prefetchMetricsForAddress } from '@/features/metrics/api';
import { projectionsQuery } from '@/features/projections/api';
import { lazyPage } from '@/lib/lazyPage';
import type { RouteHandle, RoutePrefetchContext } from '@/lib/routePrefetch';
import AppLayout from '@/routes/app-layout';
import AuthLayout from '@/routes/auth-layout';
import ClusterLayout from '@/routes/cluster-layout';
import { settingsRoute } from '@/routes/settings-routes';

// The layouts are in the first load; each page is its own chunk (lazyPage). Until the first page's chunk has
// arrived the router shows the hydrate fallback.
const loading = <LoadingState label="Loading Headroom…" fullPage />;

// Each route's `handle.prefetch`: its page's first requests, started as the app starts (lib/routePrefetch.ts).
const clusterId = ({ params }: RoutePrefetchContext) => params.clusterId ?? '';

const clusterPage: RouteHandle = {
  // every tab waits for the cluster
  prefetch: ({ queryClient, location }) => prefetchClusterForAddress(queryClient, location.pathname),
};

const overviewPage: RouteHandle = {
  prefetch: (context) => {
    const { queryClient } = context;
    const id = clusterId(context);
    void queryClient.prefetchQuery(changesQuery(id));
    void queryClient.prefetchQuery(clusterPreferencesQuery(id));
    void queryClient.prefetchQuery(clusterApplySettingsQuery(id));
    void queryClient.prefetchQuery(nodesQuery(id));
    // Beside the cluster, not after it: the source lists its badges are made of, its findings and its ceilings. A
    // cluster not yet advised on shows a notice instead of the last two (cluster-overview.tsx), and its two requests
    // answer empty lists: cheaper than a round trip more for every cluster that has been.
    void queryClient.prefetchQuery(awsConnectionsQuery());
    void queryClient.prefetchQuery(prometheusSourcesQuery());
    void queryClient.prefetchQuery(activeFindingsQuery(id));
    void queryClient.prefetchQuery(projectionsQuery(id));
    void queryClient.fetchQuery(clusterQuery(id)).then(
      (cluster) => void queryClient.prefetchQuery(sourceBadgesQuery(id, cluster.is_demo)),
      () => undefined, // the cluster layout shows the error
    );
  },
};

export const routes: RouteObject[] = [
  {
    element: <AuthLayout />,
    hydrateFallbackElement: loading,
    children: [
      { path: '/login', lazy: lazyPage(() => import('@/routes/login')) },
      { path: '/signup', lazy: lazyPage(() => import('@/routes/signup')) },
      { path: '/signup/confirm', lazy: lazyPage(() => import('@/routes/signup-confirm')) },
      { path: '/unsubscribe', lazy: lazyPage(() => import('@/routes/unsubscribe')) },
      { path: '/accept-invitation', lazy: lazyPage(() => import('@/routes/accept-invitation')) },
    ],
  },
  {
    element: <AppLayout />,
    hydrateFallbackElement: loading,
    children: [
      { path: '/', element: <Navigate to="/clusters" replace /> },
      {
        path: '/clusters',
        lazy: lazyPage(() => import('@/routes/clusters')),
        handle: {
          prefetch: ({ queryClient }) => {
            void queryClient.prefetchQuery(clustersQuery());
            void queryClient.prefetchQuery(fleetQuery());
          },
        } satisfies RouteHandle,
      },
      { path: '/decides', lazy: lazyPage(() => import('@/routes/decides')) },
      { path: '/decides/:page', lazy: lazyPage(() => import('@/routes/decides-page')) },
      {
        path: '/clusters/:clusterId',
        element: <ClusterLayout />,
        handle: clusterPage,
        children: [
          { index: true, lazy: lazyPage(() => import('@/routes/cluster-overview')), handle: overviewPage },
          {
            path: 'findings',
            lazy: lazyPage(() => import('@/routes/cluster-findings')),
            handle: {
              prefetch: (context) => void context.queryClient.prefetchQuery(findingsQuery(clusterId(context))),
            } satisfies RouteHandle,
          },
          {
            path: 'findings/:findingId',
            lazy: lazyPage(() => import('@/routes/cluster-finding')),
            handle: {
              prefetch: ({ queryClient, location }) => prefetchFindingForAddress(queryClient, location.pathname),
            } satisfies RouteHandle,
          },
          {
            path: 'metrics',
            lazy: lazyPage(() => import('@/routes/cluster-metrics')),
            handle: {
              prefetch: ({ queryClient, location }) =>
                prefetchMetricsForAddress(queryClient, location, document.documentElement.clientWidth),
            } satisfies RouteHandle,
          },
          {
            path: 'config',
            lazy: lazyPage(() => import('@/routes/cluster-config')),
            handle: {
              prefetch: (context) =>
                void context.queryClient.prefetchQuery(findingsQuery(clusterId(context), ACTIVE_FINDINGS)),
            } satisfies RouteHandle,
          },
          { path: 'patches', lazy: lazyPage(() => import('@/routes/cluster-patches')) },
          { path: 'patches/:patchId', lazy: lazyPage(() => import('@/routes/cluster-patch')) },
          {
            path: 'what-if',
            lazy: lazyPage(() => import('@/routes/cluster-what-if')),
            handle: {
              prefetch: (context) => void context.queryClient.prefetchQuery(nodesQuery(clusterId(context))),
            } satisfies RouteHandle,
          },
        ],
      },
      settingsRoute,
    ],
  },
  { path: '*', hydrateFallbackElement: loading, lazy: lazyPage(() => import('@/routes/not-found')) },
];

export function createRouter() {
  return createBrowserRouter(routes);
}
