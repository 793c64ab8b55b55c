import { Link, Navigate, useNavigate, useSearchParams } from 'react-router';
import { LoadingState } from '@/components/LoadingState';
import { safeNextPath, useSession } from '@/features/auth/api';
import { LoginForm } from '@/features/auth/components/LoginForm';
import { usePageTitle } from '@/lib/usePageTitle';

export default function LoginPage() {
  usePageTitle('Log in');
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const session = useSession();
  const next = safeNextPath(params.get('next'));

  if (session.isPending) return <LoadingState label="Checking your session…" />;
  if (session.data) return <Navigate to={next} replace />;

  return (
    <>
      <h1 className="auth-title">Log in to Headroom</h1>
      <LoginForm onSuccess={() => navigate(next, { replace: true })} />
      <p className="auth-switch">
        New to Headroom? <Link to="/signup">Create an account</Link>
      </p>
    </>
  );
}
