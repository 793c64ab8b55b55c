import { NavLink, Outlet } from 'react-router';
import '@/features/org/settings.css';

const SOURCES = [{ to: '/settings/sources', label: 'Data sources' }];
const ORGANISATION = [
  { to: '/settings/members', label: 'Members' },
  { to: '/settings/invitations', label: 'Invitations' },
  { to: '/settings/tokens', label: 'API tokens' },
  { to: '/settings/digest', label: 'Weekly email' },
  { to: '/settings/audit-log', label: 'Audit log' },
];

/** Settings: a side nav (sources, then the organisation's pages) next to the page. */
export default function SettingsLayout() {
  return (
    <div className="settings">
      <nav className="settings__nav" aria-label="Settings">
        <p className="settings__nav-group" id="settings-sources-group">
          Sources
        </p>
        <ul aria-labelledby="settings-sources-group">
          {SOURCES.map((l) => (
            <li key={l.to}>
              <NavLink to={l.to} className="settings__link">
                {l.label}
              </NavLink>
            </li>
          ))}
        </ul>
        <p className="settings__nav-group" id="settings-org-group">
          Organisation
        </p>
        <ul aria-labelledby="settings-org-group">
          {ORGANISATION.map((l) => (
            <li key={l.to}>
              <NavLink to={l.to} className="settings__link">
                {l.label}
              </NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <div className="settings__page">
        <Outlet />
      </div>
    </div>
  );
}
