import { useState } from 'react';
import { errorMessage } from '@/api/errors';
import { fetchArtefact, patchNodeLabel, rollbackNodes, saveArtefact, type Patch, type PatchFormat } from '../api';
import { FORMAT_LABEL } from './labels';

/** Formats that are one node's file: offered for the nodes the patch changes, one at a time. */
const PER_NODE: readonly PatchFormat[] = ['merged', 'diff'];
/** Formats that hold one value per key (a tikv.toml fragment, the Operator's one config string): a rollback of
 * nodes that ran different values before the patch is one node's file. tiup (per-instance config), sql (SET CONFIG
 * per instance) and tikv-ctl (per host) set each node's own value in one file. */
const ONE_VALUE: readonly PatchFormat[] = ['toml', 'operator'];

/** One download button per format the patch offers; merged and diff for a node the patch changes (chosen when it
 * changes several), and every changed node's files in one zip. With "Rollback" ticked, each button downloads that
 * format's undo, a file of the same format run the same way (the diff's undo applies with patch, the SQL's runs in
 * a TiDB session). */
export function DownloadButtons({ patch }: { patch: Patch }) {
  const [busy, setBusy] = useState<PatchFormat | null>(null);
  const [error, setError] = useState<string | null>(null);
  const withConfig = patch.nodes.filter((n) => n.has_config).map((n) => n.status_address);
  const [chosen, setChosen] = useState<string | undefined>(withConfig[0]);
  const [rollback, setRollback] = useState(false);
  const node = chosen && withConfig.includes(chosen) ? chosen : withConfig[0];
  // The nodes ran different values before the patch: each one's rollback restores its own.
  const differing = rollbackNodes(patch);
  const [rollbackChoice, setRollbackChoice] = useState<string | undefined>(differing[0]);
  const rollbackNode = rollbackChoice && differing.includes(rollbackChoice) ? rollbackChoice : differing[0];
  const pickNode = rollback && differing.length > 0;
  /** The node a download is for: merged and diff always one node's; toml and Operator a rollback's node. */
  const nodeFor = (format: PatchFormat): string | undefined =>
    PER_NODE.includes(format) ? node : pickNode && ONE_VALUE.includes(format) ? rollbackNode : undefined;

  async function download(format: PatchFormat) {
    setBusy(format);
    setError(null);
    try {
      saveArtefact(await fetchArtefact(patch.cluster_id, patch.id, format, nodeFor(format), rollback));
    } catch (cause) {
      setError(`Could not download the ${format}${rollback ? ' rollback' : ''} file: ${errorMessage(cause)}`);
    } finally {
      setBusy(null);
    }
  }

  const formats = patch.formats.filter((f) => !PER_NODE.includes(f) || node !== undefined);
  // The button's name starts with the text it shows (WCAG 2.5.3 Label in Name), then says more: the node, the format.
  const shown = (format: PatchFormat) =>
    (format === 'configs' ? 'all configs (zip)' : format) + (rollback ? ' rollback' : '');
  const label = (format: PatchFormat) => {
    const forNode = nodeFor(format);
    return forNode ? `${shown(format)} for ${patchNodeLabel(patch, forNode)}` : shown(format);
  };
  return (
    <div className="downloads" role="group" aria-label="Downloads">
      {withConfig.length > 1 && (
        <div className="field field--inline">
          <label htmlFor={`download-node-${patch.id}`}>Merged and diff for node</label>
          <select id={`download-node-${patch.id}`} value={node} onChange={(e) => setChosen(e.target.value)}>
            {withConfig.map((n) => (
              <option key={n} value={n}>
                {patchNodeLabel(patch, n)}
              </option>
            ))}
          </select>
        </div>
      )}
      <div className="field field--inline">
        <input
          id={`download-rollback-${patch.id}`}
          type="checkbox"
          checked={rollback}
          onChange={(e) => setRollback(e.target.checked)}
        />
        <label htmlFor={`download-rollback-${patch.id}`}>
          Rollback: each button downloads that format&apos;s undo, a file of the same format
        </label>
      </div>
      {pickNode && (
        <div className="field field--inline">
          <label htmlFor={`download-rollback-node-${patch.id}`}>Rollback (toml, operator) for node</label>
          <select
            id={`download-rollback-node-${patch.id}`}
            value={rollbackNode}
            onChange={(e) => setRollbackChoice(e.target.value)}
            aria-describedby={`download-rollback-why-${patch.id}`}
          >
            {differing.map((n) => (
              <option key={n} value={n}>
                {patchNodeLabel(patch, n)}
              </option>
            ))}
          </select>
          <p id={`download-rollback-why-${patch.id}`} className="muted small">
            The nodes ran different values before this patch: the toml and Operator rollbacks hold one value per key,
            so each is one node&apos;s; the tiup, sql and tikv-ctl rollbacks restore every node&apos;s own value.
          </p>
        </div>
      )}
      {formats.map((format) => (
        <button
          key={format}
          type="button"
          className="button button--secondary"
          disabled={busy !== null}
          onClick={() => void download(format)}
          title={FORMAT_LABEL[format]}
          aria-label={busy === format ? undefined : `Download ${label(format)} (${FORMAT_LABEL[format]})`}
        >
          {busy === format ? 'Preparing…' : `Download ${shown(format)}`}
        </button>
      ))}
      {error && (
        <p role="alert" className="form-error">
          {error}
        </p>
      )}
    </div>
  );
}
