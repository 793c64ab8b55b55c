import { Navigate, type RouteObject } from 'react-router';
import SettingsAlertsPage from './settings-alerts';
import SettingsAuditLogPage from './settings-audit-log';
import SettingsAwsPage from './settings-aws';
import SettingsAwsNewPage from './settings-aws-new';
import SettingsDigestPage from './settings-digest';
import SettingsInvitationsPage from './settings-invitations';
import SettingsLayout from './settings-layout';
import SettingsMembersPage from './settings-members';
import SettingsPrometheusPage from './settings-prometheus';
import SettingsPrometheusNewPage from './settings-prometheus-new';
import SettingsSourcesPage from './settings-sources';
import SettingsTokensPage from './settings-tokens';

/** Every settings page under the side-nav layout (mounted inside AppLayout by router.tsx). */
export const settingsRoute: RouteObject = {
  path: '/settings',
  element: <SettingsLayout />,
  children: [
    { index: true, element: <Navigate to="/settings/sources" replace /> },
    { path: 'sources', element: <SettingsSourcesPage /> },
    { path: 'sources/aws/new', element: <SettingsAwsNewPage /> },
    { path: 'sources/aws/:connectionId', element: <SettingsAwsPage /> },
    { path: 'sources/prometheus/new', element: <SettingsPrometheusNewPage /> },
    { path: 'sources/prometheus/:sourceId', element: <SettingsPrometheusPage /> },
    { path: 'members', element: <SettingsMembersPage /> },
    { path: 'invitations', element: <SettingsInvitationsPage /> },
    { path: 'tokens', element: <SettingsTokensPage /> },
    { path: 'audit-log', element: <SettingsAuditLogPage /> },
    { path: 'digest', element: <SettingsDigestPage /> },
    { path: 'alerts', element: <SettingsAlertsPage /> },
  ],
};
