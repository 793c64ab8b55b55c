import { useState, type FormEvent } from 'react';
import { errorMessage } from '@/api/errors';
import { fetchOwnFilePatch, saveArtefact, type OwnFileKind, type OwnFilePatch, type Patch } from '../api';

const TEXT: Record<OwnFileKind, { title: string; what: string; accept: string; field: string }> = {
  operator: {
    title: 'Patch your TiDB Operator manifest',
    what: 'TiDB Operator: give your TidbCluster (or TiKVGroup) YAML and download a patch that changes only these keys in it, keeping every other key.',
    accept: '.yaml,.yml,text/yaml',
    field: 'Manifest',
  },
  tiup: {
    title: 'Patch your TiUP topology',
    what: 'TiUP: give your topology (tiup cluster edit-config shows it) and download it with these values where TiUP reads them (an instance’s own config wins over server_configs), comments kept.',
    accept: '.yaml,.yml,text/yaml',
    field: 'Topology',
  },
};

/** Paste or pick your own file (an Operator manifest or a TiUP topology) and download it patched. */
export function OwnFilePatchForm({ patch, kind }: { patch: Patch; kind: OwnFileKind }) {
  const text = TEXT[kind];
  const [content, setContent] = useState('');
  const [result, setResult] = useState<OwnFilePatch | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      const file = await fetchOwnFilePatch(kind, patch.cluster_id, patch.id, content);
      setResult(file);
      saveArtefact(file);
    } catch (cause) {
      setError(errorMessage(cause));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={(e) => void submit(e)} aria-label={text.title}>
      <p className="muted">{text.what}</p>
      <div className="field">
        <label htmlFor={`${kind}-file-${patch.id}`}>{text.field} file</label>
        <input
          id={`${kind}-file-${patch.id}`}
          type="file"
          accept={text.accept}
          onChange={(e) => void e.target.files?.[0]?.text().then(setContent)}
        />
      </div>
      <div className="field">
        <label htmlFor={`${kind}-text-${patch.id}`}>{text.field}</label>
        <textarea
          id={`${kind}-text-${patch.id}`}
          className="mono"
          rows={6}
          value={content}
          onChange={(e) => setContent(e.target.value)}
        />
      </div>
      <button type="submit" className="button button--secondary" disabled={busy || content.trim() === ''}>
        {busy ? 'Preparing…' : `Download the patched ${text.field.toLowerCase()}`}
      </button>
      {error && (
        <p role="alert" className="form-error">
          {error}
        </p>
      )}
      {result && (
        <div role="status">
          <p>
            Saved {result.filename}.{' '}
            {result.command ? (
              <>
                Apply it with <code>{result.command}</code>
              </>
            ) : (
              'Paste it into tiup cluster edit-config, then run tiup cluster reload -R tikv for keys that need a restart.'
            )}
          </p>
          {result.notes.length > 0 && (
            <ul>
              {result.notes.map((n) => (
                <li key={n}>{n}</li>
              ))}
            </ul>
          )}
        </div>
      )}
    </form>
  );
}
