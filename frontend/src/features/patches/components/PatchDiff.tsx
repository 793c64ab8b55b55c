import { useState } from 'react';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { patchNodeLabel, patchNodes, useArtefact, type Patch } from '../api';
import { DiffView } from './DiffView';

/** The patch as a diff of one node's tikv.toml, with a choice of node when it touches several. */
export function PatchDiff({ patch, initialNode }: { patch: Patch; initialNode?: string }) {
  const nodes = patchNodes(patch);
  const [chosen, setChosen] = useState<string | undefined>(
    initialNode && nodes.includes(initialNode) ? initialNode : nodes[0],
  );
  const node = chosen && nodes.includes(chosen) ? chosen : nodes[0];
  const diff = useArtefact(patch.cluster_id, patch.id, 'diff', node);

  if (!patch.formats.includes('diff') || nodes.length === 0) {
    return (
      <p className="muted" role="note">
        This patch changes no tikv.toml key (only AWS resources), so there is no config diff. Download the AWS or
        Terraform format instead.
      </p>
    );
  }
  return (
    <div className="patch-diff">
      {nodes.length > 1 && (
        <div className="field field--inline">
          <label htmlFor={`diff-node-${patch.id}`}>Node</label>
          <select id={`diff-node-${patch.id}`} value={node} onChange={(e) => setChosen(e.target.value)}>
            {nodes.map((n) => (
              <option key={n} value={n}>
                {patchNodeLabel(patch, n)}
              </option>
            ))}
          </select>
        </div>
      )}
      {diff.isPending ? (
        <LoadingState label="Loading the diff…" />
      ) : diff.isError ? (
        <QueryError title="Could not load the diff" query={diff} />
      ) : (
        <>
          {diff.data.notes.length > 0 && (
            <ul className="notes" aria-label="Before you apply this file">
              {diff.data.notes.map((note) => (
                <li key={note}>{note}</li>
              ))}
            </ul>
          )}
          <DiffView text={diff.data.text} label={`Diff of tikv.toml on ${patchNodeLabel(patch, node ?? '')}`} />
        </>
      )}
    </div>
  );
}
