import { useEffect, useMemo, useState } from 'react';
import { errorMessage } from '@/api/errors';
import type { Change } from '@/lib/change';
import { useWhatIf } from '../api';
import { apiErrorRow, rowsFromChanges, toChanges, type Choices, type Row } from '../form';
import { WhatIfAnswerView } from './WhatIfAnswerView';
import { WhatIfForm } from './WhatIfForm';

/** How long the form rests before its changes are tried (each keystroke does not cost a request). */
export const DEBOUNCE_MS = 400;

/**
 * Try changes on the cluster's last day of data: edit volumes, instances and TiKV keys; the answer follows the
 * form (after it rests DEBOUNCE_MS) or at once with "Try".
 */
export function WhatIfPanel({
  clusterId,
  choices,
  initialChanges,
  findingHref,
}: {
  clusterId: string;
  choices: Choices;
  initialChanges: Change[];
  findingHref: (findingId: string) => string;
}) {
  const [rows, setRows] = useState<Row[]>(() => rowsFromChanges(initialChanges, choices));
  const { changes, rowOf, errors } = useMemo(() => toChanges(rows, choices), [rows, choices]);
  const valid = Object.keys(errors).length === 0;
  const key = JSON.stringify(changes);
  const [sent, setSent] = useState<{ key: string; changes: Change[]; rowOf: string[] } | null>(() =>
    valid && changes.length > 0 ? { key, changes, rowOf } : null,
  );
  useEffect(() => {
    if (!valid || key === sent?.key) return;
    const timer = window.setTimeout(() => setSent({ key, changes, rowOf }), DEBOUNCE_MS);
    return () => window.clearTimeout(timer);
  }, [key, valid, changes, rowOf, sent?.key]);

  const query = useWhatIf(clusterId, sent && sent.changes.length > 0 ? sent.changes : null);
  const current = sent?.key === key;
  const nothing = changes.length === 0;
  // A refusal answers the changes that were sent: once the form differs from them, or while they are asked again,
  // it no longer describes what is on screen, so it goes (the next answer brings its own).
  const failed = query.isError && current && !query.isFetching;
  const refused = failed ? apiErrorRow(query.error, sent?.rowOf ?? []) : null;
  const rowError = refused?.rowId ? { rowId: refused.rowId, message: refused.message } : null;

  return (
    <div className="whatif">
      <section aria-labelledby="whatif-changes" className="card">
        <h2 id="whatif-changes">Changes to try</h2>
        <p className="muted">
          Change a volume&apos;s type, size, IOPS or throughput, an instance type, or a TiKV key: the ceilings, findings,
          projections and monthly cost follow as you type. Nothing is stored or applied.
        </p>
        <form
          aria-label="Changes to try"
          onSubmit={(e) => {
            e.preventDefault();
            if (!valid || nothing) return;
            if (current) void query.refetch();
            else setSent({ key, changes, rowOf });
          }}
        >
          <WhatIfForm rows={rows} choices={choices} errors={errors} apiError={rowError} onChange={setRows} />
          <div className="toolbar">
            <button type="submit" className="button button--primary" disabled={!valid || nothing}>
              Try
            </button>
            <span className="muted" role="status">
              {nothing
                ? rows.length > 0 && 'These rows change nothing yet.'
                : !valid
                  ? 'Fix the marked fields to try these changes.'
                  : query.isFetching || !current
                    ? 'Computing…'
                    : query.isSuccess
                      ? `${changes.length} change${changes.length === 1 ? '' : 's'} tried.`
                      : ''}
            </span>
          </div>
          {refused && !refused.rowId && (
            <p role="alert" className="form-error">
              {refused.message}
            </p>
          )}
          {failed && !refused && (
            <p role="alert" className="form-error">
              {errorMessage(query.error)}
            </p>
          )}
        </form>
      </section>
      {query.data && !nothing && (
        <div aria-busy={query.isFetching || !current} className={query.isPlaceholderData ? 'whatif--stale' : undefined}>
          <WhatIfAnswerView answer={query.data} findingHref={findingHref} />
        </div>
      )}
    </div>
  );
}
