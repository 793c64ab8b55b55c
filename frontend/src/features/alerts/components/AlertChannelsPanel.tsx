import { useState, type FormEvent } from 'react';
import { fieldErrorsOf } from '@/api/errors';
import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { FormError } from '@/components/FormError';
import { LoadingState } from '@/components/LoadingState';
import { TextField } from '@/components/TextField';
import { formatTimestamp } from '@/lib/format';
import {
  deliveryText,
  KIND_LABEL,
  URL_HINT,
  useChannels,
  useCreateChannel,
  useDeleteChannel,
  useTestChannel,
  type Channel,
  type ChannelCreate,
} from '../api';

const KINDS: Channel['kind'][] = ['slack', 'webhook', 'pagerduty', 'alertmanager', 'email'];
const SEVERITIES: Channel['min_severity'][] = ['critical', 'warning', 'info'];
const HOURS = Array.from({ length: 24 }, (_, h) => h);

function AddChannelForm() {
  const create = useCreateChannel();
  const [name, setName] = useState('');
  const [kind, setKind] = useState<Channel['kind']>('slack');
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const [minSeverity, setMinSeverity] = useState<Channel['min_severity']>('warning');
  const [quietFrom, setQuietFrom] = useState('');
  const [quietTo, setQuietTo] = useState('');
  const [renotify, setRenotify] = useState('');
  const [burstHours, setBurstHours] = useState('');
  const [ceilingDays, setCeilingDays] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const server = fieldErrorsOf(create.error);
  const needsSecret = kind === 'pagerduty' || kind === 'webhook';
  // Alertmanager repeats notifications by its own repeat_interval; Headroom re-posts its open alerts every minute.
  const renotifies = kind !== 'alertmanager';

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const found: Record<string, string> = {};
    if (!name.trim()) found.name = 'Give the channel a name, e.g. the team or room it reaches.';
    if (kind === 'email') {
      if (!url.split(',').every((a) => /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(a.trim())))
        found.url = 'Enter email addresses, separated by commas.';
    } else if (!/^https?:\/\/\S+$/.test(url.trim())) found.url = 'Enter the full URL, starting with https:// (or http://).';
    if (kind === 'pagerduty' && !secret.trim()) found.secret = "PagerDuty needs the integration's routing key.";
    if ((quietFrom === '') !== (quietTo === '') || (quietFrom !== '' && quietFrom === quietTo))
      found.quiet = 'Choose both hours of the quiet period, and two different ones.';
    if (renotifies && renotify !== '' && !(Number(renotify) >= 1 && Number(renotify) <= 336))
      found.renotify = 'Between 1 and 336 hours (two weeks), or empty to send once.';
    if (burstHours !== '' && !(Number.isInteger(Number(burstHours)) && Number(burstHours) >= 1 && Number(burstHours) <= 168))
      found.burstHours = 'Whole hours from 1 to 168 (a week), or empty for no burst forecast alerts.';
    if (ceilingDays !== '' && !(Number.isInteger(Number(ceilingDays)) && Number(ceilingDays) >= 1 && Number(ceilingDays) <= 365))
      found.ceilingDays = 'Whole days from 1 to 365, or empty for no ceiling forecast alerts.';
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    const body: ChannelCreate = { name: name.trim(), kind, url: url.trim(), min_severity: minSeverity, families: [] };
    if (needsSecret && secret.trim()) body.secret = secret.trim();
    if (quietFrom !== '' && quietTo !== '') body.quiet_hours = [Number(quietFrom), Number(quietTo)];
    if (renotifies && renotify !== '') body.renotify_hours = Number(renotify);
    if (burstHours !== '') body.burst_horizon_hours = Number(burstHours);
    if (ceilingDays !== '') body.ceiling_horizon_days = Number(ceilingDays);
    create.mutate(body, {
      onSuccess: () => {
        setName('');
        setUrl('');
        setSecret('');
      },
    });
  };
  return (
    <form className="form" onSubmit={onSubmit} noValidate aria-label="Add an alert channel">
      <FormError error={create.error} />
      <TextField label="Name" value={name} onChange={(e) => setName(e.target.value)} error={errors.name ?? server.name} />
      <div className="field">
        <label className="field__label" htmlFor="channel-kind">
          Kind
        </label>
        <select id="channel-kind" className="field__input" value={kind} onChange={(e) => setKind(e.target.value as Channel['kind'])}>
          {KINDS.map((k) => (
            <option key={k} value={k}>
              {KIND_LABEL[k]}
            </option>
          ))}
        </select>
      </div>
      <TextField
        label={kind === 'email' ? 'Addresses' : 'URL'}
        value={url}
        onChange={(e) => setUrl(e.target.value)}
        hint={URL_HINT[kind]}
        error={errors.url ?? server.url}
        autoComplete="off"
      />
      {needsSecret && (
        <TextField
          label={kind === 'pagerduty' ? 'Routing key' : 'Signing key (optional)'}
          value={secret}
          onChange={(e) => setSecret(e.target.value)}
          error={errors.secret ?? server.secret}
          type="password"
          autoComplete="off"
        />
      )}
      <div className="field">
        <label className="field__label" htmlFor="channel-severity">
          Send findings from
        </label>
        <select
          id="channel-severity"
          className="field__input"
          value={minSeverity}
          onChange={(e) => setMinSeverity(e.target.value as Channel['min_severity'])}
        >
          {SEVERITIES.map((s) => (
            <option key={s} value={s}>
              {s} and above
            </option>
          ))}
        </select>
      </div>
      <fieldset className="field">
        <legend className="field__label">Quiet hours (UTC, optional): only critical alerts and resolutions go out</legend>
        <select aria-label="Quiet from" className="field__input" value={quietFrom} onChange={(e) => setQuietFrom(e.target.value)}>
          <option value="">—</option>
          {HOURS.map((h) => (
            <option key={h} value={h}>
              {String(h).padStart(2, '0')}:00
            </option>
          ))}
        </select>{' '}
        to{' '}
        <select aria-label="Quiet until" className="field__input" value={quietTo} onChange={(e) => setQuietTo(e.target.value)}>
          <option value="">—</option>
          {HOURS.map((h) => (
            <option key={h} value={h}>
              {String(h).padStart(2, '0')}:00
            </option>
          ))}
        </select>
        {errors.quiet && <p className="field__error">{errors.quiet}</p>}
      </fieldset>
      {renotifies && (
        <TextField
          label="Send again while open, every (hours, optional)"
          inputMode="numeric"
          value={renotify}
          onChange={(e) => setRenotify(e.target.value)}
          error={errors.renotify ?? server.renotify_hours}
        />
      )}
      <TextField
        label="Alert when a burst bucket is forecast to empty within (hours, optional)"
        inputMode="numeric"
        value={burstHours}
        onChange={(e) => setBurstHours(e.target.value)}
        hint="Sent whatever the finding's severity, once when the forecast comes within this many hours."
        error={errors.burstHours ?? server.burst_horizon_hours}
      />
      <TextField
        label="Alert when a ceiling is forecast to be reached within (days, optional)"
        inputMode="numeric"
        value={ceilingDays}
        onChange={(e) => setCeilingDays(e.target.value)}
        hint="IOPS, throughput and disk-space projections; sent once when one comes within this many days."
        error={errors.ceilingDays ?? server.ceiling_horizon_days}
      />
      <button type="submit" className="button button--primary" disabled={create.isPending}>
        {create.isPending ? 'Adding…' : 'Add channel'}
      </button>
    </form>
  );
}

function ChannelCard({ channel, canManage }: { channel: Channel; canManage: boolean }) {
  const test = useTestChannel();
  const remove = useDeleteChannel();
  return (
    <li className="settings-section" aria-label={`Channel ${channel.name}`}>
      <h3>
        {channel.name} <span className="muted small">({KIND_LABEL[channel.kind]})</span>
      </h3>
      <p className="muted small">
        {channel.url_hint} · {channel.min_severity} and above{channel.families.length > 0 ? ` · ${channel.families.join(', ')}` : ''}
        {channel.quiet_hours ? ` · quiet ${String(channel.quiet_hours[0]).padStart(2, '0')}:00–${String(channel.quiet_hours[1]).padStart(2, '0')}:00 UTC` : ''}
        {channel.kind === 'alertmanager'
          ? ' · re-posted every minute while open; a test alert ends by itself'
          : channel.renotify_hours
            ? ` · again every ${channel.renotify_hours} h while open`
            : ''}
        {channel.burst_horizon_hours ? ` · burst bucket empty within ${channel.burst_horizon_hours} h` : ''}
        {channel.ceiling_horizon_days ? ` · ceiling within ${channel.ceiling_horizon_days} days` : ''}
      </p>
      {canManage && (
        <p>
          <button type="button" className="button button--secondary button--small" onClick={() => test.mutate(channel.id)} disabled={test.isPending}>
            {test.isPending ? 'Sending…' : 'Send test'}
          </button>{' '}
          <button
            type="button"
            className="button button--secondary button--small"
            onClick={() => remove.mutate(channel.id)}
            disabled={remove.isPending}
            aria-label={`Remove ${channel.name}`}
          >
            Remove
          </button>
        </p>
      )}
      <FormError error={test.error ?? remove.error} />
      {channel.last_deliveries.length === 0 ? (
        <p className="muted small">Nothing sent yet.</p>
      ) : (
        <ul className="small" aria-label={`Last deliveries of ${channel.name}`}>
          {channel.last_deliveries.map((d) => (
            <li key={d.id}>
              {formatTimestamp(d.created_at)} · {d.event} · {d.title}
              {d.forecast ? ` (${d.forecast})` : ''} · <strong>{deliveryText(d)}</strong>
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/** The organisation's alert channels: add one (admins), send a test, see the last deliveries of each. */
export function AlertChannelsPanel({ canManage }: { canManage: boolean }) {
  const channels = useChannels();
  return (
    <>
      {canManage && (
        <section className="settings-section" aria-labelledby="add-channel-heading">
          <h2 id="add-channel-heading">Add a channel</h2>
          <AddChannelForm />
        </section>
      )}
      <section className="settings-section" aria-labelledby="channels-heading">
        <h2 id="channels-heading">Channels</h2>
        {channels.isPending ? (
          <LoadingState label="Loading channels…" />
        ) : channels.isError ? (
          <QueryError title="Could not load the channels" query={channels} />
        ) : channels.data.items.length === 0 ? (
          <EmptyState title="No alert channels" headingLevel={3}>
            <p>Findings are only in Headroom and the weekly email until you add Slack, a webhook, PagerDuty or your Alertmanager.</p>
          </EmptyState>
        ) : (
          <ul className="plain-list">
            {channels.data.items.map((c) => (
              <ChannelCard key={c.id} channel={c} canManage={canManage} />
            ))}
          </ul>
        )}
      </section>
    </>
  );
}
