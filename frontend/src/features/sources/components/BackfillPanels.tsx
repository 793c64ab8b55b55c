import type { ReactNode } from 'react';
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

// CloudWatch keeps 1-minute data for 15 days (docs/reference/cloudwatch.md#retention); the API defaults to 14.
const AWS_BACKFILL_DAYS = 14;
// Prometheus keeps 15 days by default (--storage.tsdb.retention.time); the API defaults to 14.
const PROMETHEUS_BACKFILL_DAYS = 14;

/** What both history imports show: the state, the progress once started, a summary, errors and the start button. */
function BackfillView({
  state,
  started,
  stateNote,
  progress,
  summary,
  lastError,
  start,
  canManage,
  onStart,
}: {
  state: string;
  started: boolean;
  stateNote?: ReactNode;
  progress: ReactNode;
  summary: ReactNode;
  lastError: string | null | undefined;
  start: { isPending: boolean; error: unknown };
  canManage: boolean;
  onStart: () => void;
}) {
  const busy = state === 'queued' || state === 'running';
  return (
    <div className="backfill">
      <p>
        State: <strong>{STATE_LABEL[state] ?? state}</strong>
        {stateNote}
      </p>
      {started && progress}
      <p className="muted">{summary}</p>
      {lastError && (
        <p className="field__error" role="alert">
          {lastError}
        </p>
      )}
      {start.error ? (
        <p className="field__error" role="alert">
          {errorMessage(start.error)}
        </p>
      ) : null}
      {canManage && !busy && (
        <button type="button" className="button button--secondary" disabled={start.isPending} onClick={onStart}>
          {start.isPending ? 'Starting…' : started ? 'Import history again' : 'Import history'}
        </button>
      )}
    </div>
  );
}

/** The CloudWatch history import: datapoints done / total and its state. */
export function AwsBackfillPanel({ connectionId, canManage }: { connectionId: string; canManage: boolean }) {
  const backfill = useAwsBackfill(connectionId);
  const start = useStartAwsBackfill(connectionId);
  if (backfill.isPending) return <LoadingState label="Loading history import…" />;
  if (backfill.isError) return <QueryError title="Could not load the history import" query={backfill} />;
  const b = backfill.data;
  const started = b.state !== 'not_started';
  return (
    <BackfillView
      state={b.state}
      started={started}
      stateNote={
        started ? (
          <span className="muted"> · {b.days} days</span>
        ) : (
          <span className="muted"> · it starts once a connection test passes</span>
        )
      }
      progress={
        <ProgressBar
          label="CloudWatch history import"
          done={b.points_done}
          total={b.points_total}
          valueText={`${formatCount(b.points_done)} / ${formatCount(b.points_total)} datapoints`}
        />
      }
      summary={
        <>
          Started {formatTimestamp(b.started_at)} · finished {formatTimestamp(b.finished_at)} ·{' '}
          {formatCount(b.points_written)} points written
        </>
      }
      lastError={b.last_error}
      start={start}
      canManage={canManage}
      onStart={() => start.mutate(AWS_BACKFILL_DAYS)}
    />
  );
}

/** The Prometheus history import: query steps done / total and its status. */
export function PrometheusBackfillPanel({ sourceId, canManage }: { sourceId: string; canManage: boolean }) {
  const backfill = usePrometheusBackfill(sourceId);
  const start = useStartPrometheusBackfill(sourceId);
  if (backfill.isPending) return <LoadingState label="Loading history import…" />;
  if (backfill.isError) return <QueryError title="Could not load the history import" query={backfill} />;
  const b = backfill.data;
  const dropped = b.dropped_non_finite + b.dropped_outside;
  return (
    <BackfillView
      state={b.status}
      started={b.status !== 'none'}
      progress={
        <ProgressBar
          label="Prometheus history import"
          done={b.steps_done}
          total={b.steps_total}
          valueText={`${formatCount(b.steps_done)} / ${formatCount(b.steps_total)} query steps (${b.percent.toFixed(0)}%)`}
        />
      }
      summary={
        <>
          Range {formatTimestamp(b.range_start_at)} to {formatTimestamp(b.range_end_at)} ·{' '}
          {formatCount(b.points_written)} points written
          {dropped > 0 && ` · ${formatCount(dropped)} dropped (NaN/Inf or outside the range)`}
        </>
      }
      lastError={b.last_error}
      start={start}
      canManage={canManage}
      onStart={() => start.mutate(PROMETHEUS_BACKFILL_DAYS)}
    />
  );
}
