import { Navigate, NavLink, Outlet, useLocation } from 'react-router';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { Logo } from '@/components/Logo';
// The layouts are in the entry chunk: they import the modules they use, not a feature's index (which would bring
// every page's components of that feature into the entry with it).
import { useLoggedOut, useSession } from '@/features/auth/api';
import { UserMenu } from '@/features/auth/components/UserMenu';

/** Every signed-in page: redirects to /login without a session, else the top bar and the page. */
export default function AppLayout() {
  const session = useSession();
  const location = useLocation();
  const loggedOut = useLoggedOut();

  if (session.isPending) return <LoadingState label="Loading Headroom…" fullPage />;
  if (session.isError) {
    return (
      <main className="page">
        <QueryError title="Could not check your session" query={session} />
      </main>
    );
  }
  if (!session.data) {
    if (loggedOut) return <Navigate to="/login" replace />;
    // The session expired or never was: come back here after logging in.
    const next = `${location.pathname}${location.search}`;
    return <Navigate to={`/login?next=${encodeURIComponent(next)}`} replace />;
  }

  return (
    <div className="app">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <div className="topbar__left">
          <NavLink to="/clusters" className="topbar__brand" aria-label="Headroom home">
            <Logo />
          </NavLink>
          <span className="topbar__org" title="Organisation">
            {session.data.organization.name}
          </span>
          <nav aria-label="Main" className="topbar__nav">
            <NavLink to="/clusters" className="topbar__link">
              Clusters
            </NavLink>
            <NavLink to="/decides" className="topbar__link">
              How Headroom decides
            </NavLink>
            <NavLink to="/settings" className="topbar__link">
              Settings
            </NavLink>
          </nav>
        </div>
        <UserMenu session={session.data} />
      </header>
      <main id="main" className="page" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}
