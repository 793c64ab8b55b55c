import type { ReactNode } from 'react';
import { errorMessage } from '@/api/errors';
import { ErrorState } from '@/components/ErrorState';

interface Mutation {
  isPending: boolean;
  isError: boolean;
  error: unknown;
}

/** The "Test connection" section of a source's page: the button (for managers), what it checks, the report. */
export function TestConnectionSection({
  test,
  onTest,
  canManage,
  checks,
  children,
}: {
  test: Mutation;
  onTest: () => void;
  canManage: boolean;
  checks: string;
  children: ReactNode;
}) {
  return (
    <section className="settings-section" aria-labelledby="test-heading">
      <div className="settings-section__header">
        <h2 id="test-heading">Test connection</h2>
        {canManage && (
          <button type="button" className="button button--primary" disabled={test.isPending} onClick={onTest}>
            {test.isPending ? 'Testing…' : 'Test connection'}
          </button>
        )}
      </div>
      <p className="muted">{checks}</p>
      {test.isError && <ErrorState title="The test could not run" message={errorMessage(test.error)} />}
      {children}
    </section>
  );
}

/** The "Remove" section of a source's page: asks `confirmText` first, then calls `onRemove`. */
export function RemoveSection({
  remove,
  onRemove,
  confirmText,
  label,
}: {
  remove: Mutation;
  onRemove: () => void;
  confirmText: string;
  label: string;
}) {
  return (
    <section className="settings-section" aria-labelledby="danger-heading">
      <h2 id="danger-heading">Remove</h2>
      {remove.isError && (
        <p className="field__error" role="alert">
          {errorMessage(remove.error)}
        </p>
      )}
      <button
        type="button"
        className="button button--secondary"
        disabled={remove.isPending}
        onClick={() => {
          if (window.confirm(confirmText)) onRemove();
        }}
      >
        {label}
      </button>
    </section>
  );
}
