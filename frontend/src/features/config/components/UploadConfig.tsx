import { useState, type FormEvent } from 'react';
import { ApiError, errorMessage } from '@/api/errors';
import { useUploadConfig, type ConfigUpload } from '../api';

interface Problem {
  key?: string;
  line?: number | null;
  message: string;
}

function problems(error: unknown): Problem[] {
  if (!(error instanceof ApiError) || !Array.isArray(error.details)) return [];
  return (error.details as Problem[]).filter((d) => typeof d?.message === 'string');
}

/** Upload the node's tikv.toml (or the cluster's TiUP topology): checked against TiKV's keys before it is stored. */
export function UploadConfig({ clusterId, nodeId, address }: { clusterId: string; nodeId: string; address: string }) {
  const upload = useUploadConfig(clusterId, nodeId);
  const [format, setFormat] = useState<ConfigUpload['format']>('toml');
  const [content, setContent] = useState('');

  async function readFile(file: File | undefined) {
    if (file) setContent(await file.text());
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    upload.mutate({ format, content });
  }

  const found = problems(upload.error);
  return (
    <details className="upload-config">
      <summary>Upload a config for {address}</summary>
      <form onSubmit={submit} aria-label={`Upload a config for ${address}`}>
        <div className="field field--inline">
          <label htmlFor={`upload-format-${nodeId}`}>Format</label>
          <select
            id={`upload-format-${nodeId}`}
            value={format}
            onChange={(e) => setFormat(e.target.value as ConfigUpload['format'])}
          >
            <option value="toml">tikv.toml</option>
            <option value="tiup_topology">TiUP topology (this node&apos;s TiKV config)</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor={`upload-file-${nodeId}`}>File</label>
          <input
            id={`upload-file-${nodeId}`}
            type="file"
            accept=".toml,.yaml,.yml,text/plain"
            onChange={(e) => void readFile(e.target.files?.[0])}
          />
        </div>
        <div className="field">
          <label htmlFor={`upload-content-${nodeId}`}>Content</label>
          <textarea
            id={`upload-content-${nodeId}`}
            className="mono"
            rows={8}
            value={content}
            onChange={(e) => setContent(e.target.value)}
          />
        </div>
        <button type="submit" className="button" disabled={upload.isPending || content.trim() === ''}>
          {upload.isPending ? 'Checking…' : 'Check and store'}
        </button>
      </form>
      {upload.isError && (
        <div role="alert" className="form-error">
          <p>{errorMessage(upload.error)}</p>
          {found.length > 1 && (
            <ul>
              {found.map((p) => (
                <li key={`${p.key ?? ''}-${p.line ?? ''}-${p.message}`}>
                  {p.line ? `line ${p.line}: ` : ''}
                  {p.message}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      {upload.isSuccess && (
        <div role="status">
          <p>
            {upload.data.created
              ? `Stored as version ${upload.data.version}.`
              : `Same as version ${upload.data.version}: nothing new stored.`}
          </p>
          {(upload.data.warnings ?? []).map((w) => (
            <p key={w} className="muted">
              {w}
            </p>
          ))}
        </div>
      )}
    </details>
  );
}
