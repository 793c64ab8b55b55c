import { Link, useNavigate, useSearchParams } from 'react-router';
import { AcceptInvitationForm } from '@/features/auth/components/AcceptInvitationForm';
import { usePageTitle } from '@/lib/usePageTitle';

/** The page an invitation link opens (the link an admin copies from Settings → Invitations). */
export default function AcceptInvitationPage() {
  usePageTitle('Accept the invitation');
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const token = params.get('token') ?? '';

  if (!token)
    return (
      <>
        <h1 className="auth-title">This invitation link is incomplete</h1>
        <div className="form-error" role="alert">
          The link has no invitation token; open the whole link you were sent, or ask the person who invited you for a new one.
        </div>
        <p className="auth-switch">
          <Link to="/login">Log in</Link>
        </p>
      </>
    );
  return (
    <>
      <h1 className="auth-title">Join your team on Headroom</h1>
      <AcceptInvitationForm token={token} onSuccess={() => navigate('/clusters', { replace: true })} />
      <p className="auth-switch">
        Already a member? <Link to="/login">Log in</Link>
      </p>
    </>
  );
}
