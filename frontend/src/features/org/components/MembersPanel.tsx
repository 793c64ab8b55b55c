import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { FormError } from '@/components/FormError';
import { LoadingState } from '@/components/LoadingState';
import { ScrollRegion } from '@/components/ScrollRegion';
import { formatTimestamp } from '@/lib/format';
import { ROLE_LABEL, ROLES, useChangeMemberRole, useMembers, useRemoveMember, type Role } from '../api';

interface MembersPanelProps {
  /** The signed-in person's role; only owners may change roles or remove members (the API's rule). */
  role: Role;
  currentUserId: string;
}

/** The organisation's members with their roles; owners can change them, everyone else sees them. */
export function MembersPanel({ role, currentUserId }: MembersPanelProps) {
  const members = useMembers();
  const change = useChangeMemberRole();
  const remove = useRemoveMember();
  const canManage = role === 'owner';

  if (members.isPending) return <LoadingState label="Loading members…" />;
  if (members.isError) {
    return <QueryError title="Could not load members" query={members} />;
  }
  if (members.data.length === 0) {
    return (
      <EmptyState title="No members">
        <p>Invite colleagues from the Invitations page.</p>
      </EmptyState>
    );
  }
  const mutationError = change.error ?? remove.error;
  return (
    <>
      {!canManage && <p className="muted">Only owners can change roles or remove members.</p>}
      <FormError error={mutationError} />
      <ScrollRegion label="Members table">
        <table className="table" aria-label="Members">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Joined</th>
              {canManage && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {members.data.map((m) => {
              const label = m.full_name || m.email;
              const self = m.user_id === currentUserId;
              return (
                <tr key={m.user_id}>
                  <th scope="row">
                    {label}
                    {self && <span className="muted"> (you)</span>}
                  </th>
                  <td>{m.email}</td>
                  <td>
                    {canManage ? (
                      <select
                        aria-label={`Role of ${label}`}
                        value={m.role}
                        disabled={change.isPending}
                        onChange={(e) => change.mutate({ userId: m.user_id, role: e.target.value as Role })}
                      >
                        {ROLES.map((r) => (
                          <option key={r} value={r}>
                            {ROLE_LABEL[r]}
                          </option>
                        ))}
                      </select>
                    ) : (
                      ROLE_LABEL[m.role]
                    )}
                  </td>
                  <td>{formatTimestamp(m.joined_at)}</td>
                  {canManage && (
                    <td>
                      {!self && (
                        <button
                          type="button"
                          className="button button--secondary button--small"
                          aria-label={`Remove ${label}`}
                          disabled={remove.isPending}
                          onClick={() => {
                            if (window.confirm(`Remove ${label} from the organisation?`)) remove.mutate(m.user_id);
                          }}
                        >
                          Remove
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      </ScrollRegion>
    </>
  );
}
