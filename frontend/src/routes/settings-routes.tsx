import { Navigate, type RouteObject } from 'react-router';
import { lazyPage } from '@/lib/lazyPage';
import SettingsLayout from './settings-layout';

/** Every settings page under the side-nav layout (mounted inside AppLayout by router.tsx); each page its own chunk. */
export const settingsRoute: RouteObject = {
  path: '/settings',
  element: <SettingsLayout />,
  children: [
    { index: true, element: <Navigate to="/settings/sources" replace /> },
    { path: 'sources', lazy: lazyPage(() => import('./settings-sources')) },
    { path: 'sources/aws/new', lazy: lazyPage(() => import('./settings-aws-new')) },
    { path: 'sources/aws/:connectionId', lazy: lazyPage(() => import('./settings-aws')) },
    { path: 'sources/prometheus/new', lazy: lazyPage(() => import('./settings-prometheus-new')) },
    { path: 'sources/prometheus/:sourceId', lazy: lazyPage(() => import('./settings-prometheus')) },
    { path: 'members', lazy: lazyPage(() => import('./settings-members')) },
    { path: 'invitations', lazy: lazyPage(() => import('./settings-invitations')) },
    { path: 'tokens', lazy: lazyPage(() => import('./settings-tokens')) },
    { path: 'audit-log', lazy: lazyPage(() => import('./settings-audit-log')) },
    { path: 'digest', lazy: lazyPage(() => import('./settings-digest')) },
    { path: 'alerts', lazy: lazyPage(() => import('./settings-alerts')) },
    { path: 'recommendations', lazy: lazyPage(() => import('./settings-recommendations')) },
    { path: 'apply', lazy: lazyPage(() => import('./settings-apply')) },
  ],
};
