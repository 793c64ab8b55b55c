import { formatTimestamp } from '@/lib/format';
import type { SourceHealth } from '../api';

// The API marks a source failing after 3 failed attempts in a row, so one blip does not flip it
// (backend/headroom/sources/health.py FAILING_AFTER).
const FAILING_AFTER = 3;

function label(health: SourceHealth, lastAttemptFailed: boolean): string {
  if (health.status === 'failing') return 'Unhealthy';
  if (lastAttemptFailed) return 'Last check failed';
  if (health.status === 'ok') return 'Healthy';
  return 'Not checked yet';
}

/** Whether the latest attempt (test or collection) failed: an error newer than the last success. */
function lastAttemptFailed(health: SourceHealth): boolean {
  if (!health.last_error || !health.last_error_at) return false;
  return !health.last_success_at || health.last_error_at > health.last_success_at;
}

/** A source's health: status, the last error (when the latest attempt failed) and when it last worked. */
export function HealthBadge({ health }: { health: SourceHealth }) {
  const failed = lastAttemptFailed(health);
  const tone = health.status === 'failing' || failed ? 'failing' : health.status;
  return (
    <div className="health">
      <span
        className={`health__badge health__badge--${tone}`}
        title={`A source is marked unhealthy after ${FAILING_AFTER} failed attempts in a row.`}
      >
        {label(health, failed)}
      </span>
      {(health.status === 'failing' || failed) && health.last_error && (
        <span className="health__error">
          {health.last_error}
          {health.consecutive_failures > 1 ? ` (${health.consecutive_failures} failures in a row)` : ''}
        </span>
      )}
      <span className="health__success muted">Last success: {formatTimestamp(health.last_success_at)}</span>
    </div>
  );
}
