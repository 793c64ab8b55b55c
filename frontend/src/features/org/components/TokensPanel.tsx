import { useState, type FormEvent } from 'react';
import { fieldErrorsOf } from '@/api/errors';
import { CopyButton } from '@/components/CopyButton';
import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { FormError } from '@/components/FormError';
import { LoadingState } from '@/components/LoadingState';
import { ScrollRegion } from '@/components/ScrollRegion';
import { TextField } from '@/components/TextField';
import { formatTimestamp } from '@/lib/format';
import {
  atLeast,
  ROLE_LABEL,
  ROLES,
  useCreateToken,
  useRevokeToken,
  useTokens,
  type ApiTokenCreate,
  type ApiTokenCreated,
  type Role,
} from '../api';
import { AdminOnly } from './AdminOnly';
import { RoleField } from './RoleField';

function CreateTokenForm({ role, onCreated }: { role: Role; onCreated: (token: ApiTokenCreated) => void }) {
  const create = useCreateToken();
  const [name, setName] = useState('');
  const [tokenRole, setTokenRole] = useState<Role>('viewer');
  const [expires, setExpires] = useState('');
  const [error, setError] = useState<string>();
  const server = fieldErrorsOf(create.error);
  // A token cannot have a higher role than its creator (the API refuses it).
  const roles = ROLES.filter((r) => atLeast(role, r));

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (!name.trim()) {
      setError('Give the token a name, e.g. what will use it.');
      return;
    }
    setError(undefined);
    const body: ApiTokenCreate = { name: name.trim(), role: tokenRole };
    if (expires) body.expires_at = `${expires}T00:00:00Z`;
    create.mutate(body, {
      onSuccess: (token) => {
        setName('');
        setExpires('');
        onCreated(token);
      },
    });
  };
  return (
    <form className="form form--inline" onSubmit={onSubmit} noValidate aria-label="Create API token">
      <FormError error={create.error} />
      <TextField label="Token name" name="name" value={name} onChange={(e) => setName(e.target.value)} error={error ?? server.name} />
      <RoleField id="token-role" value={tokenRole} onChange={setTokenRole} roles={roles} error={server.role} />
      <TextField
        label="Expires (optional)"
        name="expires_at"
        type="date"
        value={expires}
        onChange={(e) => setExpires(e.target.value)}
        error={server.expires_at}
      />
      <button type="submit" className="button button--primary" disabled={create.isPending}>
        {create.isPending ? 'Creating…' : 'Create token'}
      </button>
    </form>
  );
}

/** The one-time display of a new token: copy it now, it cannot be shown again. */
function NewToken({ token, onDismiss }: { token: ApiTokenCreated; onDismiss: () => void }) {
  return (
    <div className="one-time" role="region" aria-label="New API token">
      <p>
        <strong>{token.name}</strong>: copy this token now. It is shown only once and cannot be retrieved again.
      </p>
      <code className="one-time__secret" aria-label="Token value">
        {token.token}
      </code>{' '}
      <CopyButton text={token.token} label="Copy token" />{' '}
      <button type="button" className="button button--secondary button--small" onClick={onDismiss}>
        I have copied it
      </button>
    </div>
  );
}

/** API tokens for automation: create (shown once), list by prefix, revoke. Admins and owners only. */
export function TokensPanel({ role }: { role: Role }) {
  const canManage = atLeast(role, 'admin');
  const tokens = useTokens(canManage);
  const revoke = useRevokeToken();
  const [created, setCreated] = useState<ApiTokenCreated | null>(null);

  if (!canManage) return <AdminOnly what="API tokens" />;
  return (
    <>
      <section className="settings-section" aria-labelledby="new-token-heading">
        <h2 id="new-token-heading">Create a token</h2>
        <p className="muted">
          Send it as <code>Authorization: Bearer &lt;token&gt;</code>. It acts with the role you give it.
        </p>
        <CreateTokenForm role={role} onCreated={setCreated} />
        {created && <NewToken token={created} onDismiss={() => setCreated(null)} />}
      </section>
      <section className="settings-section" aria-labelledby="tokens-heading">
        <h2 id="tokens-heading">Tokens</h2>
        <FormError error={revoke.error} />
        {tokens.isPending ? (
          <LoadingState label="Loading API tokens…" />
        ) : tokens.isError ? (
          <QueryError title="Could not load API tokens" query={tokens} />
        ) : tokens.data.length === 0 ? (
          <EmptyState title="No API tokens" headingLevel={3}>
            <p>Create one for scripts, CI or the Headroom CLI.</p>
          </EmptyState>
        ) : (
          <ScrollRegion label="API tokens table">
            <table className="table" aria-label="API tokens">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Role</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {tokens.data.map((t) => (
                  <tr key={t.id}>
                    <th scope="row">{t.name}</th>
                    <td>
                      <code>{t.token_prefix}…</code>
                    </td>
                    <td>{ROLE_LABEL[t.role]}</td>
                    <td>{formatTimestamp(t.created_at)}</td>
                    <td>{t.last_used_at ? formatTimestamp(t.last_used_at) : 'Never'}</td>
                    <td>{t.expires_at ? formatTimestamp(t.expires_at) : 'Never'}</td>
                    <td>
                      {t.revoked_at ? (
                        `Revoked ${formatTimestamp(t.revoked_at)}`
                      ) : (
                        <button
                          type="button"
                          className="button button--secondary button--small"
                          aria-label={`Revoke ${t.name}`}
                          disabled={revoke.isPending}
                          onClick={() => {
                            if (window.confirm(`Revoke the token "${t.name}"? Anything using it stops working.`)) {
                              revoke.mutate(t.id);
                            }
                          }}
                        >
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
        )}
      </section>
    </>
  );
}
