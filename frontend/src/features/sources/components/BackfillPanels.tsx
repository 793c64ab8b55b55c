import { errorMessage } from '@/api/errors';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { formatCount, formatTimestamp } from '@/lib/format';
import { useAwsBackfill, usePrometheusBackfill, useStartAwsBackfill, useStartPrometheusBackfill } from '../api';
import { ProgressBar } from './ProgressBar';

const STATE_LABEL: Record<string, string> = {
  not_started: 'Not started',
  none: 'Not started',
  queued: 'Queued',
  running: 'Running',
  done: 'Done',
  failed: 'Failed',
};

// CloudWatch keeps 1-minute data for 15 days (domain.md §3.3 "Retention"); the API defaults to 14.
const AWS_BACKFILL_DAYS = 14;
// Prometheus keeps 15 days by default (--storage.tsdb.retention.time); the API defaults to 14.
const PROMETHEUS_BACKFILL_DAYS = 14;

function StartButton({ busy, onClick, again }: { busy: boolean; onClick: () => void; again: boolean }) {
  return (
    <button type="button" className="button button--secondary" disabled={busy} onClick={onClick}>
      {busy ? 'Starting…' : again ? 'Import history again' : 'Import history'}
    </button>
  );
}

/** The CloudWatch history import: datapoints done / total and its state. */
export function AwsBackfillPanel({ connectionId, canManage }: { connectionId: string; canManage: boolean }) {
  const backfill = useAwsBackfill(connectionId);
  const start = useStartAwsBackfill(connectionId);
  if (backfill.isPending) return <LoadingState label="Loading history import…" />;
  if (backfill.isError) {
    return <QueryError title="Could not load the history import" query={backfill} />;
  }
  const b = backfill.data;
  const busy = b.state === 'queued' || b.state === 'running';
  return (
    <div className="backfill">
      <p>
        State: <strong>{STATE_LABEL[b.state] ?? b.state}</strong>
        {b.state !== 'not_started' && <span className="muted"> · {b.days} days</span>}
      </p>
      {b.state !== 'not_started' && (
        <ProgressBar
          label="CloudWatch history import"
          done={b.points_done}
          total={b.points_total}
          valueText={`${formatCount(b.points_done)} / ${formatCount(b.points_total)} datapoints`}
        />
      )}
      <p className="muted">
        Started {formatTimestamp(b.started_at)} · finished {formatTimestamp(b.finished_at)} ·{' '}
        {formatCount(b.points_written)} points written
      </p>
      {b.last_error && (
        <p className="field__error" role="alert">
          {b.last_error}
        </p>
      )}
      {start.error && (
        <p className="field__error" role="alert">
          {errorMessage(start.error)}
        </p>
      )}
      {canManage && !busy && (
        <StartButton busy={start.isPending} again={b.state !== 'not_started'} onClick={() => start.mutate(AWS_BACKFILL_DAYS)} />
      )}
    </div>
  );
}

/** The Prometheus history import: query steps done / total and its status. */
export function PrometheusBackfillPanel({ sourceId, canManage }: { sourceId: string; canManage: boolean }) {
  const backfill = usePrometheusBackfill(sourceId);
  const start = useStartPrometheusBackfill(sourceId);
  if (backfill.isPending) return <LoadingState label="Loading history import…" />;
  if (backfill.isError) {
    return <QueryError title="Could not load the history import" query={backfill} />;
  }
  const b = backfill.data;
  const busy = b.status === 'queued' || b.status === 'running';
  return (
    <div className="backfill">
      <p>
        State: <strong>{STATE_LABEL[b.status] ?? b.status}</strong>
      </p>
      {b.status !== 'none' && (
        <ProgressBar
          label="Prometheus history import"
          done={b.steps_done}
          total={b.steps_total}
          valueText={`${formatCount(b.steps_done)} / ${formatCount(b.steps_total)} query steps (${b.percent.toFixed(0)}%)`}
        />
      )}
      <p className="muted">
        Range {formatTimestamp(b.range_start_at)} to {formatTimestamp(b.range_end_at)} ·{' '}
        {formatCount(b.points_written)} points written
        {b.dropped_non_finite + b.dropped_outside > 0 &&
          ` · ${formatCount(b.dropped_non_finite + b.dropped_outside)} dropped (NaN/Inf or outside the range)`}
      </p>
      {b.last_error && (
        <p className="field__error" role="alert">
          {b.last_error}
        </p>
      )}
      {start.error && (
        <p className="field__error" role="alert">
          {errorMessage(start.error)}
        </p>
      )}
      {canManage && !busy && (
        <StartButton
          busy={start.isPending}
          again={b.status !== 'none'}
          onClick={() => start.mutate(PROMETHEUS_BACKFILL_DAYS)}
        />
      )}
    </div>
  );
}
