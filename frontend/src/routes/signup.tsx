import { useState } from 'react';
import { Link, Navigate } from 'react-router';
import { LoadingState } from '@/components/LoadingState';
import { useSession, type SignupStarted } from '@/features/auth/api';
import { SignupForm } from '@/features/auth/components/SignupForm';
import { usePageTitle } from '@/lib/usePageTitle';

export default function SignupPage() {
  usePageTitle('Sign up');
  const session = useSession();
  const [started, setStarted] = useState<SignupStarted | null>(null);

  if (session.isPending) return <LoadingState label="Checking your session…" />;
  if (session.data) return <Navigate to="/clusters" replace />;

  if (started) {
    // The same answer whether or not the address already has an account (the API never says which).
    return (
      <>
        <h1 className="auth-title">Check your email</h1>
        <p className="auth-lead" role="status">
          {started.message}
        </p>
        <p className="auth-switch">
          Already have an account? <Link to="/login">Log in</Link>
        </p>
      </>
    );
  }

  return (
    <>
      <h1 className="auth-title">Create your Headroom account</h1>
      <p className="auth-lead">See how much disk and instance headroom your TiKV stores have left.</p>
      <SignupForm onSuccess={setStarted} />
      <p className="auth-switch">
        Already have an account? <Link to="/login">Log in</Link>
      </p>
    </>
  );
}
