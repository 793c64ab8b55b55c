import { NavLink, Outlet } from 'react-router';
import '@/features/org/settings.css';

const SOURCES = [{ to: '/settings/sources', label: 'Data sources' }];
const ORGANISATION = [
  { to: '/settings/members', label: 'Members' },
  { to: '/settings/invitations', label: 'Invitations' },
  { to: '/settings/tokens', label: 'API tokens' },
  { to: '/settings/digest', label: 'Weekly email' },
  { to: '/settings/alerts', label: 'Alerts' },
  { to: '/settings/audit-log', label: 'Audit log' },
];

function NavGroup({ id, title, links }: { id: string; title: string; links: { to: string; label: string }[] }) {
  return (
    <>
      <p className="settings__nav-group" id={id}>
        {title}
      </p>
      <ul aria-labelledby={id}>
        {links.map((l) => (
          <li key={l.to}>
            <NavLink to={l.to} className="settings__link">
              {l.label}
            </NavLink>
          </li>
        ))}
      </ul>
    </>
  );
}

/** Settings: a side nav (sources, then the organisation's pages) next to the page. */
export default function SettingsLayout() {
  return (
    <div className="settings">
      <nav className="settings__nav" aria-label="Settings">
        <NavGroup id="settings-sources-group" title="Sources" links={SOURCES} />
        <NavGroup id="settings-org-group" title="Organisation" links={ORGANISATION} />
      </nav>
      <div className="settings__page">
        <Outlet />
      </div>
    </div>
  );
}
