import { createBrowserRouter, Navigate, type RouteObject } from 'react-router';
import AcceptInvitationPage from '@/routes/accept-invitation';
import AppLayout from '@/routes/app-layout';
import AuthLayout from '@/routes/auth-layout';
import ClusterConfigPage from '@/routes/cluster-config';
import ClusterFindingPage from '@/routes/cluster-finding';
import ClusterFindingsPage from '@/routes/cluster-findings';
import ClusterLayout from '@/routes/cluster-layout';
import ClusterMetricsPage from '@/routes/cluster-metrics';
import ClusterOverviewPage from '@/routes/cluster-overview';
import ClusterPatchPage from '@/routes/cluster-patch';
import ClusterPatchesPage from '@/routes/cluster-patches';
import ClusterWhatIfPage from '@/routes/cluster-what-if';
import ClustersPage from '@/routes/clusters';
import LoginPage from '@/routes/login';
import NotFoundPage from '@/routes/not-found';
import { settingsRoute } from '@/routes/settings-routes';
import SignupPage from '@/routes/signup';
import SignupConfirmPage from '@/routes/signup-confirm';
import UnsubscribePage from '@/routes/unsubscribe';

export const routes: RouteObject[] = [
  {
    element: <AuthLayout />,
    children: [
      { path: '/login', element: <LoginPage /> },
      { path: '/signup', element: <SignupPage /> },
      { path: '/signup/confirm', element: <SignupConfirmPage /> },
      { path: '/unsubscribe', element: <UnsubscribePage /> },
      { path: '/accept-invitation', element: <AcceptInvitationPage /> },
    ],
  },
  {
    element: <AppLayout />,
    children: [
      { path: '/', element: <Navigate to="/clusters" replace /> },
      { path: '/clusters', element: <ClustersPage /> },
      {
        path: '/clusters/:clusterId',
        element: <ClusterLayout />,
        children: [
          { index: true, element: <ClusterOverviewPage /> },
          { path: 'findings', element: <ClusterFindingsPage /> },
          { path: 'findings/:findingId', element: <ClusterFindingPage /> },
          { path: 'metrics', element: <ClusterMetricsPage /> },
          { path: 'config', element: <ClusterConfigPage /> },
          { path: 'patches', element: <ClusterPatchesPage /> },
          { path: 'patches/:patchId', element: <ClusterPatchPage /> },
          { path: 'what-if', element: <ClusterWhatIfPage /> },
        ],
      },
      settingsRoute,
    ],
  },
  { path: '*', element: <NotFoundPage /> },
];

export function createRouter() {
  return createBrowserRouter(routes);
}
