import { errorMessage } from '@/api/errors';

interface ErrorStateProps {
  title?: string;
  /** The API's error.message, shown as is. */
  message: string;
  onRetry?: () => void;
}

export function ErrorState({ title = 'Something went wrong', message, onRetry }: ErrorStateProps) {
  return (
    <div className="state state--error" role="alert">
      <h2 className="state__title">{title}</h2>
      <p>{message}</p>
      {onRetry && (
        <button type="button" className="button button--secondary" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

/** A query that failed: the API's message and a retry that fetches again. */
export function QueryError({ title, query }: { title: string; query: { error: unknown; refetch: () => unknown } }) {
  return <ErrorState title={title} message={errorMessage(query.error)} onRetry={() => void query.refetch()} />;
}
