import { createBrowserRouter, Navigate, type RouteObject } from 'react-router';
import { LoadingState } from '@/components/LoadingState';
import { lazyPage } from '@/lib/lazyPage';
import AppLayout from '@/routes/app-layout';
import AuthLayout from '@/routes/auth-layout';
import ClusterLayout from '@/routes/cluster-layout';
import { settingsRoute } from '@/routes/settings-routes';

// The layouts are in the first load; each page is its own chunk (lazyPage). Until the first page's chunk has
// arrived the router shows the hydrate fallback.
const loading = <LoadingState label="Loading Headroom…" fullPage />;

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
      { path: '/clusters', lazy: lazyPage(() => import('@/routes/clusters')) },
      { path: '/decides', lazy: lazyPage(() => import('@/routes/decides')) },
      { path: '/decides/:page', lazy: lazyPage(() => import('@/routes/decides-page')) },
      {
        path: '/clusters/:clusterId',
        element: <ClusterLayout />,
        children: [
          { index: true, lazy: lazyPage(() => import('@/routes/cluster-overview')) },
          { path: 'findings', lazy: lazyPage(() => import('@/routes/cluster-findings')) },
          { path: 'findings/:findingId', lazy: lazyPage(() => import('@/routes/cluster-finding')) },
          { path: 'metrics', lazy: lazyPage(() => import('@/routes/cluster-metrics')) },
          { path: 'config', lazy: lazyPage(() => import('@/routes/cluster-config')) },
          { path: 'patches', lazy: lazyPage(() => import('@/routes/cluster-patches')) },
          { path: 'patches/:patchId', lazy: lazyPage(() => import('@/routes/cluster-patch')) },
          { path: 'what-if', lazy: lazyPage(() => import('@/routes/cluster-what-if')) },
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
