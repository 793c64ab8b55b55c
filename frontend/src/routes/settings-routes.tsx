import type { QueryClient } from '@tanstack/react-query';
import { Navigate, type RouteObject } from 'react-router';
import { channelsQuery } from '@/features/alerts/api';
import { digestSettingsQuery } from '@/features/digest/api';
import { atLeast, auditLogQuery, invitationsQuery, membersQuery, tokensQuery, type Role } from '@/features/org/api';
import { awsConnectionsQuery, prometheusSourcesQuery } from '@/features/sources/api';
import { lazyPage } from '@/lib/lazyPage';
import type { RouteHandle } from '@/lib/routePrefetch';
import SettingsLayout from './settings-layout';

/** A settings page's first request (lib/routePrefetch.ts); with `forAtLeast`, only for a role that may make it
 * (the page shows the others a notice), once the session has said which. */
function asks(prefetch: (queryClient: QueryClient) => Promise<void>, forAtLeast?: Role): RouteHandle {
  return {
    prefetch: ({ queryClient, role }) => {
      if (forAtLeast === undefined) void prefetch(queryClient);
      else {
        void role().then((r) => {
          if (r !== null && atLeast(r as Role, forAtLeast)) void prefetch(queryClient);
        });
      }
    },
  };
}

const sourcesPage: RouteHandle = {
  prefetch: ({ queryClient }) => {
    void queryClient.prefetchQuery(awsConnectionsQuery());
    void queryClient.prefetchQuery(prometheusSourcesQuery());
  },
};

/** Every settings page under the side-nav layout (mounted inside AppLayout by router.tsx); each page its own chunk. */
export const settingsRoute: RouteObject = {
  path: '/settings',
  element: <SettingsLayout />,
  children: [
    { index: true, element: <Navigate to="/settings/sources" replace /> },
    { path: 'sources', lazy: lazyPage(() => import('./settings-sources')), handle: sourcesPage },
    { path: 'sources/aws/new', lazy: lazyPage(() => import('./settings-aws-new')) },
    { path: 'sources/aws/:connectionId', lazy: lazyPage(() => import('./settings-aws')) },
    { path: 'sources/prometheus/new', lazy: lazyPage(() => import('./settings-prometheus-new')) },
    { path: 'sources/prometheus/:sourceId', lazy: lazyPage(() => import('./settings-prometheus')) },
    { path: 'members', lazy: lazyPage(() => import('./settings-members')), handle: asks((qc) => qc.prefetchQuery(membersQuery())) },
    {
      path: 'invitations',
      lazy: lazyPage(() => import('./settings-invitations')),
      handle: asks((qc) => qc.prefetchQuery(invitationsQuery()), 'admin'),
    },
    { path: 'tokens', lazy: lazyPage(() => import('./settings-tokens')), handle: asks((qc) => qc.prefetchQuery(tokensQuery()), 'admin') },
    {
      path: 'audit-log',
      lazy: lazyPage(() => import('./settings-audit-log')),
      handle: asks((qc) => qc.prefetchQuery(auditLogQuery(null)), 'admin'),
    },
    { path: 'digest', lazy: lazyPage(() => import('./settings-digest')), handle: asks((qc) => qc.prefetchQuery(digestSettingsQuery())) },
    { path: 'alerts', lazy: lazyPage(() => import('./settings-alerts')), handle: asks((qc) => qc.prefetchQuery(channelsQuery())) },
    { path: 'recommendations', lazy: lazyPage(() => import('./settings-recommendations')) },
    { path: 'apply', lazy: lazyPage(() => import('./settings-apply')) },
  ],
};
