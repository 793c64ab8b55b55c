import { useState } from 'react';

/** Copy `text` to the clipboard; says "Copied" for a moment (or why it could not). */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const onClick = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
    setTimeout(() => setState('idle'), 2000);
  };
  return (
    <button type="button" className="button button--secondary button--small" onClick={() => void onClick()}>
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select the text' : label}
    </button>
  );
}
