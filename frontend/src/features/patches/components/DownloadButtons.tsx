import { useState } from 'react';
import { errorMessage } from '@/api/errors';
import { fetchArtefact, saveArtefact, type Patch, type PatchFormat } from '../api';
import { FORMAT_LABEL } from './labels';

/** One download button per format the patch offers. */
export function DownloadButtons({ patch }: { patch: Patch }) {
  const [busy, setBusy] = useState<PatchFormat | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function download(format: PatchFormat) {
    setBusy(format);
    setError(null);
    try {
      saveArtefact(await fetchArtefact(patch.cluster_id, patch.id, format));
    } catch (cause) {
      setError(`Could not download the ${format} file: ${errorMessage(cause)}`);
    } finally {
      setBusy(null);
    }
  }

  return (
    <div className="downloads" role="group" aria-label="Downloads">
      {patch.formats.map((format) => (
        <button
          key={format}
          type="button"
          className="button button--secondary"
          disabled={busy !== null}
          onClick={() => void download(format)}
          title={FORMAT_LABEL[format]}
          aria-label={`Download ${format} (${FORMAT_LABEL[format]})`}
        >
          {busy === format ? 'Preparing…' : `Download ${format}`}
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
