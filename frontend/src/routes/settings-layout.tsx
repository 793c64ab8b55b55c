import { useState } from 'react';
import { NavLink, Outlet, useLocation } from 'react-router';
import '@/features/org/settings.css';

const SOURCES = [{ to: '/settings/sources', label: 'Data sources' }];
const ORGANISATION = [
  { to: '/settings/members', label: 'Members' },
  { to: '/settings/invitations', label: 'Invitations' },
  { to: '/settings/tokens', label: 'API tokens' },
  { to: '/settings/digest', label: 'Weekly email' },
  { to: '/settings/alerts', label: 'Alerts' },
  { to: '/settings/recommendations', label: 'Recommendations' },
  { to: '/settings/apply', label: 'Apply' },
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

/**
 * Settings: a side nav (sources, then the organisation's pages) next to the page. On a narrow screen the nav
 * collapses to a button naming the current page, which opens the list; following a link closes it again.
 */
export default function SettingsLayout() {
  const { pathname } = useLocation();
  // Open on the page where it was opened: another page (a link followed) finds it closed.
  const [openOn, setOpenOn] = useState<string | null>(null);
  const open = openOn === pathname;
  const current = [...SOURCES, ...ORGANISATION].find((l) => pathname.startsWith(l.to))?.label ?? 'Settings';
  return (
    <div className="settings">
      <nav className={open ? 'settings__nav settings__nav--open' : 'settings__nav'} aria-label="Settings">
        <button
          type="button"
          className="settings__menu-button"
          aria-expanded={open}
          aria-controls="settings-nav-links"
          onClick={() => setOpenOn(open ? null : pathname)}
        >
          Settings: {current}
          <span className="settings__menu-caret" aria-hidden="true">
            ▾
          </span>
        </button>
        <div id="settings-nav-links" className="settings__nav-links">
          <NavGroup id="settings-sources-group" title="Sources" links={SOURCES} />
          <NavGroup id="settings-org-group" title="Organisation" links={ORGANISATION} />
        </div>
      </nav>
      <div className="settings__page">
        <Outlet />
      </div>
    </div>
  );
}
