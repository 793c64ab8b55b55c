import { useCallback, useState } from 'react';
import { useSearchParams } from 'react-router';
import { DigestSettingsPanel, MyDigestPreferences, VerifyEmailBanner } from '@/features/digest';
import { atLeast } from '@/features/org';
import { usePageTitle } from '@/lib/usePageTitle';
import { useSettingsCaller } from './settings-session';

/** /settings/digest: the weekly advisory email; `?verify=<token>` comes from a test send's link. */
export default function SettingsDigestPage() {
  usePageTitle('Weekly email');
  const { role } = useSettingsCaller();
  const [params, setParams] = useSearchParams();
  // Kept after the address drops it, so the outcome stays on screen.
  const [token] = useState(() => params.get('verify'));
  // Drop the token from the address once it is used, so a reload does not post it again.
  const clearToken = useCallback(
    () =>
      setParams(
        (current) => {
          const next = new URLSearchParams(current);
          next.delete('verify');
          return next;
        },
        { replace: true },
      ),
    [setParams],
  );
  return (
    <>
      <div className="page__header">
        <h1>Weekly email</h1>
        <p className="page__lead">
          Every Monday at 08:00 UTC, Headroom emails a summary of each cluster's findings to your organisation.
        </p>
      </div>
      {token && <VerifyEmailBanner token={token} onDone={clearToken} />}
      <MyDigestPreferences />
      <DigestSettingsPanel canManage={atLeast(role, 'admin')} />
    </>
  );
}
