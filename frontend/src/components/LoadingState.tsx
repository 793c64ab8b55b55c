interface LoadingStateProps {
  /** What is loading, read out by screen readers and shown under the spinner. */
  label?: string;
  fullPage?: boolean;
}

export function LoadingState({ label = 'Loading…', fullPage = false }: LoadingStateProps) {
  return (
    <div className={fullPage ? 'state state--full-page' : 'state'} role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      <span>{label}</span>
    </div>
  );
}
