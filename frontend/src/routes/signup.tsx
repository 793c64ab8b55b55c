import { Link, Navigate, useNavigate } from 'react-router';
import { LoadingState } from '@/components/LoadingState';
import { SignupForm, useSession } from '@/features/auth';
import { usePageTitle } from '@/lib/usePageTitle';

export default function SignupPage() {
  usePageTitle('Sign up');
  const navigate = useNavigate();
  const session = useSession();

  if (session.isPending) return <LoadingState label="Checking your session…" />;
  if (session.data) return <Navigate to="/clusters" replace />;

  return (
    <>
      <h1 className="auth-title">Create your Headroom account</h1>
      <p className="auth-lead">See how much disk and instance headroom your TiKV stores have left.</p>
      <SignupForm onSuccess={() => navigate('/clusters', { replace: true })} />
      <p className="auth-switch">
        Already have an account? <Link to="/login">Log in</Link>
      </p>
    </>
  );
}
