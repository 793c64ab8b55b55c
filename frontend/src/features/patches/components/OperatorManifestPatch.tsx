import { useState, type FormEvent } from 'react';
import { errorMessage } from '@/api/errors';
import { fetchOperatorPatch, saveArtefact, type OperatorPatchFile, type Patch } from '../api';

/** Paste or pick your TidbCluster / TiKVGroup YAML: get a patch of it that changes only this patch's keys. */
export function OperatorManifestPatch({ patch }: { patch: Patch }) {
  const [manifest, setManifest] = useState('');
  const [result, setResult] = useState<OperatorPatchFile | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      const file = await fetchOperatorPatch(patch.cluster_id, patch.id, manifest);
      setResult(file);
      saveArtefact(file);
    } catch (cause) {
      setError(errorMessage(cause));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={(e) => void submit(e)} aria-label="Patch your TiDB Operator manifest">
      <p className="muted">
        TiDB Operator: give your TidbCluster (or TiKVGroup) YAML and download a patch that changes only these keys in
        it, keeping every other key.
      </p>
      <div className="field">
        <label htmlFor={`manifest-file-${patch.id}`}>Manifest file</label>
        <input
          id={`manifest-file-${patch.id}`}
          type="file"
          accept=".yaml,.yml,text/yaml"
          onChange={(e) => void e.target.files?.[0]?.text().then(setManifest)}
        />
      </div>
      <div className="field">
        <label htmlFor={`manifest-text-${patch.id}`}>Manifest</label>
        <textarea
          id={`manifest-text-${patch.id}`}
          className="mono"
          rows={6}
          value={manifest}
          onChange={(e) => setManifest(e.target.value)}
        />
      </div>
      <button type="submit" className="button button--secondary" disabled={busy || manifest.trim() === ''}>
        {busy ? 'Preparing…' : 'Download the manifest patch'}
      </button>
      {error && (
        <p role="alert" className="form-error">
          {error}
        </p>
      )}
      {result && (
        <p role="status">
          Saved {result.filename}. Apply it with <code>{result.command.replace('<this file>', result.filename)}</code>
        </p>
      )}
    </form>
  );
}
