import { useState, type FormEvent } from 'react';
import { fieldErrorsOf } from '@/api/errors';
import { QueryError } from '@/components/ErrorState';
import { FormError } from '@/components/FormError';
import { LoadingState } from '@/components/LoadingState';
import { TextField } from '@/components/TextField';
import {
  useApplyRoleTemplates,
  useOrgApplySettings,
  useSetOrgApplySettings,
  useStopAllPlans,
  type OrgApplySettings,
} from '../api';

function download(filename: string, mediaType: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: mediaType }));
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.click();
  URL.revokeObjectURL(url);
}

function ApplyForm({ settings }: { settings: OrgApplySettings }) {
  const save = useSetOrgApplySettings();
  const [enabled, setEnabled] = useState(settings.enabled);
  const [roleArn, setRoleArn] = useState(settings.role_arn ?? '');
  const [tagKey, setTagKey] = useState(settings.volume_tag_key ?? '');
  const [tagValue, setTagValue] = useState(settings.volume_tag_value ?? '');
  const errors = fieldErrorsOf(save.error);
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({
      enabled,
      role_arn: roleArn.trim() || null,
      volume_tag_key: tagKey.trim() || null,
      volume_tag_value: tagKey.trim() ? tagValue.trim() : null,
    });
  };
  return (
    <form className="form" onSubmit={onSubmit} noValidate aria-label="Apply settings">
      <FormError error={save.error} shownFields={['role_arn', 'volume_tag_key', 'volume_tag_value']} />
      <label className="field field--checkbox">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Allow Headroom to
        apply approved fixes in this organisation
      </label>
      <TextField
        label="Write role ARN"
        hint="The role created from the template below; needed for volume changes only."
        value={roleArn}
        onChange={(e) => setRoleArn(e.target.value)}
        error={errors.role_arn}
        placeholder="arn:aws:iam::123456789012:role/HeadroomApply"
      />
      <TextField
        label="Volume tag key"
        hint="Headroom may modify only volumes carrying this tag."
        value={tagKey}
        onChange={(e) => setTagKey(e.target.value)}
        error={errors.volume_tag_key}
        placeholder="headroom-apply"
      />
      <TextField
        label="Volume tag value"
        value={tagValue}
        onChange={(e) => setTagValue(e.target.value)}
        error={errors.volume_tag_value}
        placeholder="true"
      />
      <button type="submit" className="button button--primary" disabled={save.isPending}>
        {save.isPending ? 'Saving…' : 'Save'}
      </button>
      {save.isSuccess && (
        <p role="status" className="muted">
          Saved: apply is {save.data.enabled ? 'on' : 'off'} for the organisation.
        </p>
      )}
    </form>
  );
}

function RoleTemplates() {
  const templates = useApplyRoleTemplates();
  if (templates.isPending) return <LoadingState label="Loading the write role templates" />;
  if (templates.isError) return <QueryError title="Could not load the write role templates" query={templates} />;
  return (
    <>
      {templates.data.note && <p className="muted">{templates.data.note}</p>}
      <ul className="list-plain">
        {templates.data.templates.map((t) => (
          <li key={t.filename}>
            <button type="button" className="button" onClick={() => download(t.filename, t.media_type, t.text)}>
              Download the {t.kind === 'cloudformation' ? 'CloudFormation' : 'Terraform'} template
            </button>
          </li>
        ))}
      </ul>
    </>
  );
}

/** The kill switch: every running plan of the organisation stops at once (admins and owners). */
function StopEverything() {
  const stop = useStopAllPlans();
  const stopped = stop.data?.stopped.length;
  return (
    <section className="card" aria-labelledby="apply-stop">
      <h2 id="apply-stop">Stop every run</h2>
      <p className="muted">
        Stops every plan running in this organisation at once. A step being carried out finishes and is kept (each
        plan shows it, with its undo); no further step starts.
      </p>
      <FormError error={stop.error} />
      <button type="button" className="button button--danger" disabled={stop.isPending} onClick={() => stop.mutate()}>
        {stop.isPending ? 'Stopping…' : 'Stop every run'}
      </button>
      {stopped !== undefined && (
        <p role="status" className="muted">
          {stopped === 0 ? 'No plan was running.' : `Stopped ${stopped} running plan${stopped === 1 ? '' : 's'}.`}
        </p>
      )}
    </section>
  );
}

/** The organisation's apply switch, write role and volume tag (owners change them), what apply allows, and the
 * kill switch (admins and owners). */
export function OrgApplyPanel({ isOwner, canStop }: { isOwner: boolean; canStop: boolean }) {
  const settings = useOrgApplySettings();
  if (settings.isPending) return <LoadingState label="Loading the apply settings" />;
  if (settings.isError) return <QueryError title="Could not load the apply settings" query={settings} />;
  const data = settings.data;
  return (
    <>
      <section className="card" aria-labelledby="apply-state">
        <h2 id="apply-state">Apply is {data.enabled ? 'on' : 'off'}</h2>
        <p>What it allows, once an owner turns it on here and for a cluster:</p>
        <ul>
          {data.allows.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
        <p>What it never does:</p>
        <ul>
          {data.never.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
        {isOwner ? (
          <ApplyForm settings={data} />
        ) : (
          <p className="muted">
            Write role: {data.role_arn ?? 'not set'}. Volume tag:{' '}
            {data.volume_tag_key ? `${data.volume_tag_key} = ${data.volume_tag_value ?? ''}` : 'not set'}. Only
            owners can change these.
          </p>
        )}
      </section>
      <section className="card" aria-labelledby="apply-role">
        <h2 id="apply-role">The write role</h2>
        <p className="muted">
          A separate IAM role from the read-only one. It allows changing the type, IOPS or throughput of volumes
          carrying your tag, and following those changes; nothing else. Its trust policy requires your external ID.
        </p>
        <RoleTemplates />
      </section>
      {canStop && <StopEverything />}
    </>
  );
}
