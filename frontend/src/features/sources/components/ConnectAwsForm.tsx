import { useState, type FormEvent } from 'react';
import { fieldErrorsOf } from '@/api/errors';
import { FormError } from '@/components/FormError';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { CopyButton, DownloadButton } from '@/components/CopyButton';
import { TextField } from '@/components/TextField';
import {
  useAwsSetup,
  useCreateAwsConnection,
  type AwsConnectionCreate,
  type AwsConnectionCreated,
  type AwsSetup,
} from '../api';
import {
  CFN_TEMPLATE_FILE,
  cloudFormationCommand,
  HEADROOM_ACCOUNT_PLACEHOLDER,
  permissionsPolicy,
  TERRAFORM_FILE,
  terraformCommand,
  trustPolicy,
} from '../policy';

type AuthKind = AwsConnectionCreate['auth_kind'] & string;
// Every field the form shows the API's message under (an error about these only is not repeated at the top).
const SHOWN_FIELDS = ['name', 'auth_kind', 'role_arn', 'access_key_id', 'secret_access_key', 'regions'];

// The API's own pattern (backend/headroom/sources/schemas.py REGION_PATTERN), checked here to save a trip.
const REGION_PATTERN = /^[a-z]{2}(-gov)?-[a-z]+-\d$/;

const AUTH_OPTIONS: { value: AuthKind; label: string; hint: string }[] = [
  { value: 'assume_role', label: 'IAM role (recommended)', hint: 'Headroom assumes a read-only role in your account.' },
  { value: 'static_keys', label: 'Access keys', hint: "An IAM user's access key with the same read-only policy." },
  {
    value: 'default_chain',
    label: 'Default credential chain',
    hint: "Self-hosted only: the server's own instance profile or environment.",
  },
];

function parseRegions(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((r) => r.trim())
    .filter(Boolean);
}

function Snippet({ title, text, filename }: { title: string; text: string; filename?: string }) {
  return (
    <figure className="snippet">
      <figcaption className="snippet__caption">
        <span>{title}</span>
        <span className="snippet__actions">
          <CopyButton text={text} label={`Copy ${title.toLowerCase()}`} />
          {filename && <DownloadButton text={text} filename={filename} label={`Download ${filename}`} />}
        </span>
      </figcaption>
      <pre className="snippet__code" aria-label={title} tabIndex={0}>
        <code>{text}</code>
      </pre>
    </figure>
  );
}

/** Offer a template the API filled in (YAML or HCL text) as a file. */
function TemplateDownload({ template }: { template: AwsSetup['templates'][number] }) {
  const title = template.kind === 'cloudformation' ? 'CloudFormation template' : 'Terraform file';
  return (
    <DownloadButton
      text={template.text}
      filename={template.filename}
      type={template.media_type}
      label={`Download ${title} (${template.filename})`}
    />
  );
}

/** Step 1: the external ID, Headroom's account ID and the role to create with them. */
function RoleInstructions() {
  const setup = useAwsSetup();
  if (setup.isPending) return <LoadingState label="Loading your external ID…" />;
  if (setup.isError) {
    return <QueryError title="Could not load your external ID" query={setup} />;
  }
  const { external_id: id, headroom_account_id: accountId, note, templates } = setup.data;
  const account = accountId ?? HEADROOM_ACCOUNT_PLACEHOLDER;
  const cfn = templates.find((t) => t.kind === 'cloudformation');
  const tf = templates.find((t) => t.kind === 'terraform');
  return (
    <section className="settings-section" aria-labelledby="role-heading">
      <h2 id="role-heading">1. Create a read-only role in your AWS account</h2>
      <p>
        Your organisation&apos;s external ID:{' '}
        <code className="external-id" aria-label="External ID">
          {id}
        </code>{' '}
        <CopyButton text={id} label="Copy external ID" />
      </p>
      {accountId ? (
        <p>
          Headroom&apos;s AWS account ID:{' '}
          <code className="external-id" aria-label="Headroom AWS account ID">
            {accountId}
          </code>{' '}
          <CopyButton text={accountId} label="Copy account ID" />
        </p>
      ) : (
        <p className="muted" role="note">
          {note ?? "Headroom's AWS account ID is not set."} Replace <code>{HEADROOM_ACCOUNT_PLACEHOLDER}</code> below
          with it.
        </p>
      )}
      <p className="muted">
        The trust policy only lets Headroom&apos;s account assume the role when it presents this external ID (the IAM
        guard against the confused-deputy problem).
      </p>
      <p>
        Download the role as a CloudFormation template or a Terraform file, with your external ID
        {accountId ? " and Headroom's account ID" : ''} already filled in, and deploy either one:
      </p>
      <div className="template-downloads" role="group" aria-label="Template downloads">
        {cfn && <TemplateDownload template={cfn} />}
        {tf && <TemplateDownload template={tf} />}
      </div>
      <Snippet title="CloudFormation command" text={cloudFormationCommand(id, account, cfn?.filename ?? CFN_TEMPLATE_FILE)} />
      <Snippet title="Terraform command" text={terraformCommand(id, account, tf?.filename ?? TERRAFORM_FILE)} />
      <p>Or create the role by hand with these two policies:</p>
      <Snippet title="Trust policy" text={trustPolicy(id, account)} filename="headroom-trust-policy.json" />
      <Snippet
        title="Permissions policy"
        text={permissionsPolicy()}
        filename="headroom-readonly-policy.json"
      />
    </section>
  );
}

/** The "Connect AWS account" flow: role instructions, then the connection form (saving also tests it). */
export function ConnectAwsForm({ onCreated }: { onCreated: (connection: AwsConnectionCreated) => void }) {
  const create = useCreateAwsConnection();
  const [authKind, setAuthKind] = useState<AuthKind>('assume_role');
  const [name, setName] = useState('');
  const [roleArn, setRoleArn] = useState('');
  const [regions, setRegions] = useState('us-east-1');
  const [accessKeyId, setAccessKeyId] = useState('');
  const [secret, setSecret] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const server = fieldErrorsOf(create.error);
  const fieldError = (field: string) => errors[field] ?? server[field];

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const found: Record<string, string> = {};
    const regionList = parseRegions(regions);
    if (!name.trim()) found.name = 'Give the connection a name.';
    if (regionList.length === 0) found.regions = 'Enter at least one region, like us-east-1.';
    const bad = regionList.find((r) => !REGION_PATTERN.test(r));
    if (bad) found.regions = `"${bad}" is not an AWS region code (like us-east-1).`;
    if (authKind === 'assume_role' && !roleArn.trim()) found.role_arn = 'Enter the ARN of the role you created.';
    if (authKind === 'static_keys') {
      if (!accessKeyId.trim()) found.access_key_id = 'Enter the access key ID.';
      if (!secret) found.secret_access_key = 'Enter the secret access key.';
    }
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    const body: AwsConnectionCreate = { name: name.trim(), auth_kind: authKind, regions: regionList };
    if (authKind === 'assume_role') body.role_arn = roleArn.trim();
    if (authKind === 'static_keys') {
      body.access_key_id = accessKeyId.trim();
      body.secret_access_key = secret;
    }
    create.mutate(body, {
      onSuccess: (connection) => {
        // The secret is write-only: never keep it around once the API has it.
        setSecret('');
        onCreated(connection);
      },
    });
  };

  return (
    <>
      {authKind === 'assume_role' && <RoleInstructions />}
      {authKind === 'static_keys' && (
        <section className="settings-section" aria-labelledby="user-heading">
          <h2 id="user-heading">Give the IAM user only this policy</h2>
          <p className="muted">Read-only EC2 inventory and CloudWatch metrics, nothing else (the same policy as the role).</p>
          <Snippet title="Permissions policy" text={permissionsPolicy()} filename="headroom-readonly-policy.json" />
        </section>
      )}
      <section className="settings-section" aria-labelledby="connect-heading">
        <h2 id="connect-heading">{authKind === 'assume_role' ? '2. Connect it' : 'Connect'}</h2>
        <form className="form" onSubmit={onSubmit} noValidate aria-label="Connect AWS account">
          <FormError error={create.error} shownFields={SHOWN_FIELDS} />
          <TextField
            label="Name"
            name="name"
            required
            value={name}
            onChange={(e) => setName(e.target.value)}
            error={fieldError('name')}
            hint="For you, e.g. the account's alias."
          />
          <fieldset className="field">
            <legend className="field__label">Credentials</legend>
            {AUTH_OPTIONS.map((o) => (
              <label key={o.value} className="radio">
                <input
                  type="radio"
                  name="auth_kind"
                  value={o.value}
                  checked={authKind === o.value}
                  onChange={() => setAuthKind(o.value)}
                />
                <span>
                  {o.label} <span className="muted">— {o.hint}</span>
                </span>
              </label>
            ))}
            {fieldError('auth_kind') && <p className="field__error">{fieldError('auth_kind')}</p>}
          </fieldset>
          {authKind === 'assume_role' && (
            <TextField
              label="Role ARN"
              name="role_arn"
              required
              placeholder="arn:aws:iam::123456789012:role/HeadroomReadOnly"
              value={roleArn}
              onChange={(e) => setRoleArn(e.target.value)}
              error={fieldError('role_arn')}
            />
          )}
          {authKind === 'static_keys' && (
            <>
              <TextField
                label="Access key ID"
                name="access_key_id"
                required
                autoComplete="off"
                value={accessKeyId}
                onChange={(e) => setAccessKeyId(e.target.value)}
                error={fieldError('access_key_id')}
              />
              <TextField
                label="Secret access key"
                name="secret_access_key"
                type="password"
                required
                autoComplete="new-password"
                hint="Stored encrypted and never shown again."
                value={secret}
                onChange={(e) => setSecret(e.target.value)}
                error={fieldError('secret_access_key')}
              />
            </>
          )}
          <TextField
            label="Regions"
            name="regions"
            required
            hint="Region codes where your TiKV volumes live, separated by commas."
            value={regions}
            onChange={(e) => setRegions(e.target.value)}
            error={fieldError('regions')}
          />
          <button type="submit" className="button button--primary" disabled={create.isPending}>
            {create.isPending ? 'Connecting and testing…' : 'Connect AWS account'}
          </button>
          <p className="muted small">
            Headroom tests the connection as it saves it; the 14-day history import starts once a test passes.
          </p>
        </form>
      </section>
    </>
  );
}
