import { useEffect, useRef } from 'react';
import { errorMessage } from '@/api/errors';
import { useVerifyEmail } from '../api';

/** Verify the address from a test send's link (`?verify=<token>`) once, and say how it went. */
export function VerifyEmailBanner({ token, onDone }: { token: string; onDone?: () => void }) {
  const verify = useVerifyEmail();
  const { mutate } = verify;
  // One POST per token, also under StrictMode's double effects.
  const sent = useRef<string | null>(null);
  useEffect(() => {
    if (sent.current === token) return;
    sent.current = token;
    mutate(token, { onSettled: () => onDone?.() });
  }, [token, mutate, onDone]);
  if (verify.isPending || verify.isIdle) {
    return (
      <p className="muted" role="status">
        Verifying your email address…
      </p>
    );
  }
  if (verify.isError) {
    return (
      <div className="form-error" role="alert">
        Could not verify your email address: {errorMessage(verify.error)}
      </div>
    );
  }
  return (
    <p className="digest-notice" role="status">
      Email verified: {verify.data.email} now gets the weekly email.
    </p>
  );
}
