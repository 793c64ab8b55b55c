import { createBrowserRouter, Navigate, type RouteObject } from 'react-router';
import AppLayout from '@/routes/app-layout';
import AuthLayout from '@/routes/auth-layout';
import ClustersPage from '@/routes/clusters';
import LoginPage from '@/routes/login';
import NotFoundPage from '@/routes/not-found';
import { settingsRoute } from '@/routes/settings-routes';
import SignupPage from '@/routes/signup';

export const routes: RouteObject[] = [
  {
    element: <AuthLayout />,
    children: [
      { path: '/login', element: <LoginPage /> },
      { path: '/signup', element: <SignupPage /> },
    ],
  },
  {
    element: <AppLayout />,
    children: [
      { path: '/', element: <Navigate to="/clusters" replace /> },
      { path: '/clusters', element: <ClustersPage /> },
      settingsRoute,
    ],
  },
  { path: '*', element: <NotFoundPage /> },
];

export function createRouter() {
  return createBrowserRouter(routes);
}
