import { useState } from 'react';
import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { FormError } from '@/components/FormError';
import { LoadingState } from '@/components/LoadingState';
import { ScrollRegion } from '@/components/ScrollRegion';
import { formatDate, formatDateTime } from '@/lib/format';
import {
  useDigestPreferences,
  useDigestPreview,
  useDigestSettings,
  useSendTestDigest,
  useUpdateDigestSettings,
  type DigestSend,
  type DigestSettings,
} from '../api';

function formatWeek(isoDate: string): string {
  return `Week of ${formatDate(isoDate)}`;
}

// The statuses of digest/models.py DIGEST_SEND_STATUSES.
const STATUS_LABEL: Record<string, string> = {
  sending: 'Sending',
  sent: 'Sent',
  retrying: 'Retrying',
  failed: 'Failed',
  skipped: 'Skipped',
};

function Toggles({ settings, canManage }: { settings: DigestSettings; canManage: boolean }) {
  const update = useUpdateDigestSettings();
  const readOnly = !canManage || update.isPending;
  return (
    <section className="settings-section" aria-labelledby="digest-settings-heading">
      <h2 id="digest-settings-heading">Weekly email</h2>
      {!settings.smtp_configured && (
        <p className="muted" role="note">
          This installation has no mail server (HEADROOM_SMTP_HOST), so nothing is sent until one is configured.
        </p>
      )}
      <fieldset className="digest-toggles" disabled={readOnly}>
        <legend className="visually-hidden">Weekly email settings</legend>
        <label className="digest-toggle">
          <input
            type="checkbox"
            checked={settings.enabled}
            onChange={(e) => update.mutate({ enabled: e.target.checked })}
          />{' '}
          Send the weekly advisory email <span className="muted">(Mondays 08:00 UTC)</span>
        </label>
        <label className="digest-toggle">
          <input
            type="checkbox"
            checked={settings.include_viewers}
            onChange={(e) => update.mutate({ include_viewers: e.target.checked })}
          />{' '}
          Include viewers <span className="muted">(admins and owners always get it)</span>
        </label>
      </fieldset>
      {!canManage && <p className="muted">Only admins and owners can change these settings.</p>}
      <FormError error={update.error} prefix="Could not save: " />
      <h3>Recipients this week</h3>
      {settings.recipients.length === 0 ? (
        <p className="muted">Nobody yet: members get the email once they verify their address with a test send.</p>
      ) : (
        <ul aria-label="Recipients">
          {settings.recipients.map((r) => (
            <li key={r}>{r}</li>
          ))}
        </ul>
      )}
    </section>
  );
}

function SendsTable({ sends }: { sends: DigestSend[] }) {
  return (
    <section className="settings-section" aria-labelledby="digest-sends-heading">
      <h2 id="digest-sends-heading">Last sends</h2>
      {sends.length === 0 ? (
        <EmptyState title="No sends yet" headingLevel={3}>
          <p>The first weekly email goes out on the next Monday at 08:00 UTC once the email is on.</p>
        </EmptyState>
      ) : (
        <ScrollRegion label="Last sends table">
          <table className="table">
            <caption className="visually-hidden">Last weekly email sends</caption>
            <thead>
              <tr>
                <th scope="col">Week</th>
                <th scope="col">Status</th>
                <th scope="col">Recipients</th>
                <th scope="col">Sent</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {sends.map((s) => (
                <tr key={s.id}>
                  <th scope="row">{formatWeek(s.week_start)}</th>
                  <td>
                    <span className={`badge badge--${s.status === 'sent' ? 'ok' : s.status === 'failed' ? 'failing' : 'unknown'}`}>
                      {STATUS_LABEL[s.status] ?? s.status}
                    </span>
                  </td>
                  <td>{s.recipients}</td>
                  <td>{s.sent_at ? formatDateTime(s.sent_at) : <span className="muted">—</span>}</td>
                  <td>{s.error ?? <span className="muted">None</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
    </section>
  );
}

function SendTest({ canManage, verified }: { canManage: boolean; verified: boolean }) {
  const send = useSendTestDigest();
  return (
    <section className="settings-section" aria-labelledby="digest-test-heading">
      <h2 id="digest-test-heading">Send me a test</h2>
      <p className="muted">
        Sends this week&apos;s email to you now, with a link that verifies your address
        {verified ? ' (your address is verified)' : ' (your address is not verified yet)'}.
      </p>
      <button
        type="button"
        className="button button--secondary"
        disabled={!canManage || send.isPending}
        title={canManage ? undefined : 'Only admins and owners can send a test.'}
        onClick={() => send.mutate()}
      >
        {send.isPending ? 'Sending…' : 'Send me a test'}
      </button>
      <div role="status" aria-live="polite">
        {send.data && (
          <p className={send.data.status === 'failed' ? 'form-error' : 'muted'}>
            {send.data.status === 'sent' ? 'Sent' : send.data.status === 'skipped' ? 'Not sent' : 'Failed'} to{' '}
            {send.data.to}: {send.data.detail}
          </p>
        )}
      </div>
      <FormError error={send.error} prefix="Could not send the test: " />
    </section>
  );
}

function Preview({ ready }: { ready: boolean }) {
  const preview = useDigestPreview(ready);
  const [format, setFormat] = useState<'html' | 'text'>('html');
  return (
    <section className="settings-section" aria-labelledby="digest-preview-heading">
      <div className="settings-section__header">
        <h2 id="digest-preview-heading">This week&apos;s email</h2>
        <div role="group" aria-label="Preview format">
          <button
            type="button"
            className="button button--secondary button--small"
            aria-pressed={format === 'html'}
            onClick={() => setFormat('html')}
          >
            HTML
          </button>{' '}
          <button
            type="button"
            className="button button--secondary button--small"
            aria-pressed={format === 'text'}
            onClick={() => setFormat('text')}
          >
            Text
          </button>
        </div>
      </div>
      {preview.isPending ? (
        <LoadingState label="Rendering this week's email…" />
      ) : preview.isError ? (
        <QueryError title="Could not load the preview" query={preview} />
      ) : (
        <>
          <p>
            <strong>Subject:</strong> {preview.data.subject}
          </p>
          {format === 'html' ? (
            // sandbox="" : no scripts, no forms, no navigation, a unique origin; the email's HTML is only shown.
            <iframe
              className="digest-preview"
              title="Email preview"
              sandbox=""
              loading="lazy"
              srcDoc={preview.data.html}
            />
          ) : (
            <pre className="snippet__code" aria-label="Email text" tabIndex={0}>
              {preview.data.text}
            </pre>
          )}
        </>
      )}
    </section>
  );
}

/** The weekly advisory email: on/off and viewers (admins and owners), recipients, last sends, a test, a preview.
 * The settings show as soon as they load; the preview asks the server only then, and has its own loading state. */
export function DigestSettingsPanel({ canManage }: { canManage: boolean }) {
  const settings = useDigestSettings();
  const preferences = useDigestPreferences();
  const ready = !settings.isPending && !preferences.isPending;
  return (
    <>
      {settings.isPending ? (
        <LoadingState label="Loading the weekly email settings…" />
      ) : settings.isError ? (
        <QueryError title="Could not load the weekly email settings" query={settings} />
      ) : (
        <>
          <Toggles settings={settings.data} canManage={canManage} />
          <SendTest canManage={canManage} verified={settings.data.caller_email_verified} />
          <SendsTable sends={settings.data.last_sends} />
        </>
      )}
      <Preview ready={ready} />
    </>
  );
}
