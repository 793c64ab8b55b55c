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
  useInvitations,
  useInvite,
  useRevokeInvitation,
  type InvitationCreated,
  type Role,
} from '../api';
import { AdminOnly } from './AdminOnly';
import { RoleField } from './RoleField';

function InviteForm({ onCreated }: { onCreated: (invitation: InvitationCreated) => void }) {
  const invite = useInvite();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [error, setError] = useState<string>();
  const server = fieldErrorsOf(invite.error);

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim())) {
      setError('Enter a valid email address, like name@company.com.');
      return;
    }
    setError(undefined);
    invite.mutate(
      { email: email.trim(), role },
      {
        onSuccess: (created) => {
          setEmail('');
          onCreated(created);
        },
      },
    );
  };
  return (
    <form className="form form--inline" onSubmit={onSubmit} noValidate aria-label="Invite a member">
      <FormError error={invite.error} />
      <TextField label="Email" name="email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} error={error ?? server.email} />
      <RoleField id="invite-role" value={role} onChange={setRole} error={server.role} />
      <button type="submit" className="button button--primary" disabled={invite.isPending}>
        {invite.isPending ? 'Inviting…' : 'Send invitation'}
      </button>
    </form>
  );
}

/** Pending invitations; owners invite (getting the accept link once) and revoke. */
export function InvitationsPanel({ role }: { role: Role }) {
  const canSee = atLeast(role, 'admin');
  const canManage = role === 'owner';
  const invitations = useInvitations(canSee);
  const revoke = useRevokeInvitation();
  const [created, setCreated] = useState<InvitationCreated | null>(null);

  if (!canSee) return <AdminOnly what="Invitations" />;
  return (
    <>
      {canManage ? (
        <section className="settings-section" aria-labelledby="invite-heading">
          <h2 id="invite-heading">Invite a member</h2>
          <InviteForm onCreated={setCreated} />
          {created && (
            <div className="one-time" role="status" aria-label="Invitation link">
              <p>
                Send this link to <strong>{created.email}</strong>. It is shown only now and expires{' '}
                {formatTimestamp(created.expires_at)}.
              </p>
              <code className="one-time__secret">{created.accept_url}</code>{' '}
              <CopyButton text={created.accept_url} label="Copy link" />
            </div>
          )}
        </section>
      ) : (
        <p className="muted">Only owners can invite or revoke.</p>
      )}
      <section className="settings-section" aria-labelledby="pending-heading">
        <h2 id="pending-heading">Pending invitations</h2>
        <FormError error={revoke.error} />
        {invitations.isPending ? (
          <LoadingState label="Loading invitations…" />
        ) : invitations.isError ? (
          <QueryError title="Could not load invitations" query={invitations} />
        ) : invitations.data.length === 0 ? (
          <EmptyState title="No pending invitations" headingLevel={3}>
            <p>Invited people appear here until they accept.</p>
          </EmptyState>
        ) : (
          <ScrollRegion label="Invitations table">
            <table className="table" aria-label="Invitations">
              <thead>
                <tr>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Sent</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Status</th>
                  {canManage && <th scope="col">Actions</th>}
                </tr>
              </thead>
              <tbody>
                {invitations.data.map((inv) => (
                  <tr key={inv.id}>
                    <th scope="row">{inv.email}</th>
                    <td>{ROLE_LABEL[inv.role]}</td>
                    <td>{formatTimestamp(inv.created_at)}</td>
                    <td>{formatTimestamp(inv.expires_at)}</td>
                    <td>{inv.revoked_at ? `Revoked ${formatTimestamp(inv.revoked_at)}` : 'Pending'}</td>
                    {canManage && (
                      <td>
                        {!inv.revoked_at && (
                          <button
                            type="button"
                            className="button button--secondary button--small"
                            aria-label={`Revoke invitation for ${inv.email}`}
                            disabled={revoke.isPending}
                            onClick={() => revoke.mutate(inv.id)}
                          >
                            Revoke
                          </button>
                        )}
                      </td>
                    )}
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
