import { Link } from 'react-router';
import { FormError } from '@/components/FormError';
import { useUnsubscribe } from '../api';

/** What an email's unsubscribe link opens: it explains, and one button turns the weekly email off. A person's
 * click GETs this page; only the button POSTs (mail clients POST the List-Unsubscribe URL themselves, RFC 8058). */
export function UnsubscribePanel({ token }: { token: string }) {
  const unsubscribe = useUnsubscribe();
  if (!token) {
    return (
      <>
        <h1 className="auth-title">Unsubscribe from the weekly email</h1>
        <div className="form-error" role="alert">
          This link has no unsubscribe token; open the whole link from the email.
        </div>
      </>
    );
  }
  if (unsubscribe.data) {
    const done = unsubscribe.data;
    return (
      <>
        <h1 className="auth-title">You are unsubscribed</h1>
        <p role="status">
          {done.already_unsubscribed ? 'You had already unsubscribed: ' : ''}
          {done.email} gets no more weekly email from {done.organization}.
        </p>
        <p className="auth-switch">
          Changed your mind? Turn it back on, or choose clusters, under{' '}
          <Link to="/settings/digest">Weekly email settings</Link>.
        </p>
      </>
    );
  }
  return (
    <>
      <h1 className="auth-title">Unsubscribe from the weekly email</h1>
      <p>
        Headroom emails a summary of your organisation&apos;s clusters every Monday. Unsubscribing stops it for
        you only, in this organisation; others keep getting theirs. You can turn it back on in the settings.
      </p>
      <button
        type="button"
        className="button"
        disabled={unsubscribe.isPending}
        onClick={() => unsubscribe.mutate(token)}
      >
        {unsubscribe.isPending ? 'Unsubscribing…' : 'Unsubscribe'}
      </button>
      <FormError error={unsubscribe.error} prefix="Could not unsubscribe: " />
    </>
  );
}
