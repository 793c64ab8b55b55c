import { useState } from 'react';
import { errorMessage } from '@/api/errors';
import { formatDateTime } from '@/lib/format';
import { useFindingAction, type Finding } from '../api';

// Snooze choices are a product decision (no external source): a day for "not today", a week for "next sprint",
// thirty days for "next month".
const SNOOZE_DAYS = [1, 7, 30] as const;
const DAY_MS = 86_400_000;

/** Acknowledge, snooze, resolve or reopen a finding; admins only, viewers are told why they cannot. */
export function FindingActions({ finding, canManage }: { finding: Finding; canManage: boolean }) {
  const action = useFindingAction(finding);
  const [snoozeDays, setSnoozeDays] = useState<number>(SNOOZE_DAYS[1]);
  const busy = action.isPending;

  if (!canManage) {
    return (
      <p className="muted" role="note">
        Only admins can acknowledge, snooze, resolve or reopen findings.
      </p>
    );
  }

  const closed = finding.status === 'resolved';
  return (
    <div className="finding-actions" role="group" aria-label="Finding actions">
      {!closed && finding.status !== 'acknowledged' && (
        <button type="button" className="button button--secondary" disabled={busy} onClick={() => action.mutate('acknowledge')}>
          Acknowledge
        </button>
      )}
      {!closed && (
        <span className="snooze">
          <label htmlFor="snooze-days">Snooze for</label>
          <select id="snooze-days" value={snoozeDays} onChange={(e) => setSnoozeDays(Number(e.target.value))}>
            {SNOOZE_DAYS.map((d) => (
              <option key={d} value={d}>
                {d} day{d === 1 ? '' : 's'}
              </option>
            ))}
          </select>
          <button
            type="button"
            className="button button--secondary"
            disabled={busy}
            onClick={() => action.mutate({ snoozeUntil: new Date(Date.now() + snoozeDays * DAY_MS).toISOString() })}
          >
            Snooze
          </button>
        </span>
      )}
      {!closed && (
        <button type="button" className="button button--secondary" disabled={busy} onClick={() => action.mutate('resolve')}>
          Resolve
        </button>
      )}
      {finding.status !== 'open' && (
        <button type="button" className="button button--secondary" disabled={busy} onClick={() => action.mutate('reopen')}>
          Reopen
        </button>
      )}
      {finding.snoozed_until && finding.status === 'snoozed' && (
        <span className="muted">Snoozed until {formatDateTime(finding.snoozed_until)}</span>
      )}
      {action.isError && (
        <p role="alert" className="form-error">
          {errorMessage(action.error)}
        </p>
      )}
    </div>
  );
}
