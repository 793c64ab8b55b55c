import { useState } from 'react';
import { copyText } from '@/lib/clipboard';
import { downloadText } from '@/lib/download';

/** Copy `text` to the clipboard; says "Copied" for a moment (or why it could not). */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const onClick = async () => {
    setState((await copyText(text)) ? 'copied' : 'failed');
    setTimeout(() => setState('idle'), 2000);
  };
  return (
    <button type="button" className="button button--secondary button--small" onClick={() => void onClick()}>
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select the text' : label}
    </button>
  );
}

/** Offer `text` as a file download (built in the browser; nothing is fetched). */
export function DownloadButton({
  text,
  filename,
  label,
  type = 'application/json',
}: {
  text: string;
  filename: string;
  label: string;
  type?: string;
}) {
  return (
    <button
      type="button"
      className="button button--secondary button--small"
      onClick={() => downloadText(text, filename, type)}
    >
      {label}
    </button>
  );
}
