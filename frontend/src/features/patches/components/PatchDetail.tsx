import { errorMessage } from '@/api/errors';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { formatDateTime } from '@/lib/format';
import { useMarkApplied, useMemberNames, usePatch, type Patch } from '../api';
import { ChangesTable } from './ChangesTable';
import { DownloadButtons } from './DownloadButtons';
import { OwnFilePatchForm } from './OwnFilePatchForm';
import { PatchDiff } from './PatchDiff';

function MarkApplied({ patch, canManage }: { patch: Patch; canManage: boolean }) {
  const mark = useMarkApplied(patch.cluster_id, patch.id);
  if (patch.applied_at) return null;
  return (
    <div className="mark-applied">
      <button
        type="button"
        className="button button--primary"
        disabled={!canManage || mark.isPending}
        title={canManage ? undefined : 'Only admins can mark a patch applied.'}
        onClick={() => mark.mutate()}
      >
        {mark.isPending ? 'Saving…' : 'Mark applied'}
      </button>
      {mark.isError && (
        <p role="alert" className="form-error">
          {errorMessage(mark.error)}
        </p>
      )}
    </div>
  );
}

export function PatchDetail({ patch, canManage }: { patch: Patch; canManage: boolean }) {
  const names = useMemberNames();
  const who = (id: string | null | undefined) => (id ? (names.data?.[id] ?? 'a member') : 'Headroom');
  return (
    <article className="patch" aria-labelledby="patch-title">
      <header className="patch__header">
        <h2 id="patch-title">Patch of {formatDateTime(patch.created_at)}</h2>
        <dl className="facts">
          <dt>Created</dt>
          <dd>
            {formatDateTime(patch.created_at)} by {who(patch.created_by_user_id)}
          </dd>
          <dt>Status</dt>
          <dd>
            {patch.applied_at
              ? `Applied ${formatDateTime(patch.applied_at)} by ${who(patch.applied_by_user_id)}`
              : 'Not applied yet'}
          </dd>
          <dt>Findings</dt>
          <dd>{patch.finding_ids.length}</dd>
          {patch.base_config && (
            <>
              <dt>Base config</dt>
              <dd>
                version {patch.base_config.version} ({patch.base_config.source}, captured{' '}
                {formatDateTime(patch.base_config.captured_at)})
              </dd>
            </>
          )}
        </dl>
        <MarkApplied patch={patch} canManage={canManage} />
      </header>

      <section className="card" aria-labelledby="patch-changes-heading">
        <h3 id="patch-changes-heading">Changes</h3>
        <ChangesTable changes={patch.changes} nodes={patch.nodes} />
      </section>

      <section className="card" aria-labelledby="patch-diff-heading">
        <h3 id="patch-diff-heading">Diff</h3>
        <PatchDiff patch={patch} />
      </section>

      <section className="card" aria-labelledby="patch-downloads-heading">
        <h3 id="patch-downloads-heading">Download</h3>
        <DownloadButtons patch={patch} />
        {patch.nodes.length > 0 && patch.formats.includes('tiup') && <OwnFilePatchForm patch={patch} kind="tiup" />}
        {patch.nodes.length > 0 && patch.formats.includes('operator') && (
          <OwnFilePatchForm patch={patch} kind="operator" />
        )}
      </section>

      {patch.notes.length > 0 && (
        <section className="card" aria-labelledby="patch-notes-heading">
          <h3 id="patch-notes-heading">Notes</h3>
          <ul>
            {patch.notes.map((note) => (
              <li key={note}>{note}</li>
            ))}
          </ul>
        </section>
      )}
    </article>
  );
}

export function PatchDetailPanel({
  clusterId,
  patchId,
  canManage,
}: {
  clusterId: string;
  patchId: string;
  canManage: boolean;
}) {
  const patch = usePatch(clusterId, patchId);
  if (patch.isPending) return <LoadingState label="Loading the patch…" />;
  if (patch.isError) {
    return <QueryError title="Could not load this patch" query={patch} />;
  }
  return <PatchDetail patch={patch.data} canManage={canManage} />;
}
