import { Outlet } from 'react-router';
import { Logo } from '@/components/Logo';

/** Public pages (sign up, log in): a centred card under the Headroom mark. */
export default function AuthLayout() {
  return (
    <div className="auth-layout">
      <header className="auth-layout__brand">
        <Logo />
      </header>
      <main className="auth-layout__card">
        <Outlet />
      </main>
      <footer className="auth-layout__footer">Storage headroom for TiKV on EC2 and EBS</footer>
    </div>
  );
}
