import type { SourceHealth } from '../api';
import { formatDateTime } from '../form';

const LABEL: Record<SourceHealth['status'], string> = {
  ok: 'Healthy',
  failing: 'Unhealthy',
  unknown: 'Not checked yet',
};

/** A source's health: status, the last error (when failing) and when it last worked. */
export function HealthBadge({ health }: { health: SourceHealth }) {
  return (
    <div className="health">
      <span className={`health__badge health__badge--${health.status}`}>{LABEL[health.status]}</span>
      {health.status === 'failing' && health.last_error && (
        <span className="health__error">
          {health.last_error}
          {health.consecutive_failures > 1 ? ` (${health.consecutive_failures} failures in a row)` : ''}
        </span>
      )}
      <span className="health__success muted">Last success: {formatDateTime(health.last_success_at)}</span>
    </div>
  );
}
