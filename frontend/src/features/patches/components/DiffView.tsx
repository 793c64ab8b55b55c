/** A unified diff, one line per row, additions and removals marked in colour and by their +/- sign. */
export function DiffView({ text, label }: { text: string; label: string }) {
  if (text.trim() === '') {
    return (
      <p className="muted" role="note">
        No change to this node's file.
      </p>
    );
  }
  const lines = text.replace(/\n$/, '').split('\n');
  return (
    <pre className="diff" aria-label={label} tabIndex={0}>
      <code>
        {lines.map((line, i) => {
          const kind = line.startsWith('+++') || line.startsWith('---')
            ? 'file'
            : line.startsWith('@@')
              ? 'hunk'
              : line.startsWith('+')
                ? 'add'
                : line.startsWith('-')
                  ? 'del'
                  : 'ctx';
          return (
            <span key={i} className={`diff__line diff__line--${kind}`}>
              {line}
              {'\n'}
            </span>
          );
        })}
      </code>
    </pre>
  );
}
