import { useState } from 'react';
import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { ScrollRegion } from '@/components/ScrollRegion';
import { formatTimestamp } from '@/lib/format';
import { atLeast, AUDIT_PAGE_SIZE, useAuditLog, useMembers, type Role } from '../api';
import { AdminOnly } from './AdminOnly';

function detailsText(details: Record<string, unknown>): string {
  const entries = Object.entries(details);
  if (entries.length === 0) return '—';
  return entries.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ');
}

/** Who did what, newest first, a page at a time (cursor: the last id of the page). */
export function AuditLogPanel({ role }: { role: Role }) {
  const canSee = atLeast(role, 'admin');
  // Cursors of the pages before the current one, so "Newer" can step back.
  const [cursors, setCursors] = useState<(number | null)[]>([]);
  const [beforeId, setBeforeId] = useState<number | null>(null);
  const log = useAuditLog(beforeId, canSee);
  const members = useMembers();

  if (!canSee) return <AdminOnly what="The audit log" />;
  if (log.isPending) return <LoadingState label="Loading the audit log…" />;
  if (log.isError) {
    return <QueryError title="Could not load the audit log" query={log} />;
  }
  const entries = log.data;
  if (entries.length === 0 && beforeId === null) {
    return (
      <EmptyState title="Nothing in the audit log yet">
        <p>Changes to members, tokens and sources are recorded here.</p>
      </EmptyState>
    );
  }
  const who = new Map((members.data ?? []).map((m) => [m.user_id, m.full_name || m.email]));
  const actor = (userId: string | null | undefined, tokenId: string | null | undefined) => {
    if (userId) return who.get(userId) ?? `user ${userId.slice(0, 8)}`;
    if (tokenId) return `API token ${tokenId.slice(0, 8)}`;
    return 'system';
  };
  const last = entries[entries.length - 1];
  const hasOlder = entries.length === AUDIT_PAGE_SIZE && last !== undefined;
  const page = cursors.length + 1;
  return (
    <>
      <ScrollRegion label="Audit log table">
        <table className="table" aria-label="Audit log">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">Details</th>
              <th scope="col">IP</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.id}>
                <td>{formatTimestamp(e.created_at)}</td>
                <td>{actor(e.actor_user_id, e.actor_token_id)}</td>
                <td title={e.action}>{e.action_text}</td>
                <td>{e.target_kind ? `${e.target_kind}${e.target_id ? ` ${e.target_id.slice(0, 8)}` : ''}` : '—'}</td>
                <td>{detailsText(e.details)}</td>
                <td>{e.ip ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
      <nav className="pager" aria-label="Audit log pages">
        <button
          type="button"
          className="button button--secondary button--small"
          disabled={cursors.length === 0 || log.isFetching}
          onClick={() => {
            const previous = cursors[cursors.length - 1] ?? null;
            setCursors(cursors.slice(0, -1));
            setBeforeId(previous);
          }}
        >
          Newer
        </button>
        <span>Page {page}</span>
        <button
          type="button"
          className="button button--secondary button--small"
          disabled={!hasOlder || log.isFetching}
          onClick={() => {
            if (!last) return;
            setCursors([...cursors, beforeId]);
            setBeforeId(last.id);
          }}
        >
          Older
        </button>
      </nav>
    </>
  );
}
