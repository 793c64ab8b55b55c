import { useEffect, useRef } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { errorMessage } from '@/api/errors';
import { LoadingState } from '@/components/LoadingState';
import { useConfirmSignup } from '@/features/auth/api';
import { usePageTitle } from '@/lib/usePageTitle';

/** The page the emailed sign-up link opens: it creates the account, logs in and goes to the clusters. */
export default function SignupConfirmPage() {
  usePageTitle('Finish signing up');
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const confirm = useConfirmSignup();
  const token = params.get('token') ?? '';
  const sent = useRef(false);

  useEffect(() => {
    // Once per link, also under React's development double effects.
    if (!token || sent.current) return;
    sent.current = true;
    confirm.mutate(token, { onSuccess: () => navigate('/clusters', { replace: true }) });
  }, [token, confirm, navigate]);

  if (token && !confirm.isError) return <LoadingState label="Creating your account…" />;

  return (
    <>
      <h1 className="auth-title">We could not finish your sign-up</h1>
      <div className="form-error" role="alert">
        {confirm.error
          ? errorMessage(confirm.error)
          : 'This link has no sign-up token; open the whole link from the email.'}
      </div>
      <p className="auth-switch">
        <Link to="/signup">Sign up again</Link> or <Link to="/login">log in</Link>
      </p>
    </>
  );
}
