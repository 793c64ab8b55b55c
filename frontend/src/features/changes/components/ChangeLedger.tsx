import { Link } from 'react-router';
import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { formatTimestamp, formatUsdChange, formatValue, peakUse } from '@/lib/format';
import {
  metricName,
  outcomeNumbers,
  peakText,
  useChanges,
  VERDICT_NAMES,
  type ChangeEntry,
  type FixOutcome,
  type MeasuredCell,
} from '../api';
import { BeforeAfterChart } from './BeforeAfterChart';

const KIND_NAMES: Record<ChangeEntry['kind'], string> = {
  patch_applied: 'Patch applied',
  apply: 'Applied by Headroom',
  apply_undo: 'Undone by Headroom',
  inventory: 'Detected change in AWS',
  config: 'Detected change in the TiKV config',
  config_upload: 'Config upload',
};

/** The cell the change moved most (the chart shows that one; the table lists all). */
function largestMove(cells: MeasuredCell[]): MeasuredCell {
  const move = (c: MeasuredCell) => Math.abs((c.before_peak_percent ?? 0) - (c.after_peak_percent ?? 0));
  return [...cells].sort((a, b) => move(b) - move(a))[0]!;
}

const VERDICT_BADGE: Record<FixOutcome['verdict'], string> = {
  held: 'badge badge--ok',
  partly: 'badge badge--simulated',
  missed: 'badge badge--failing',
  too_early: 'badge',
  not_measurable: 'badge',
};

/** Whether the fix did what the finding predicted: a badge, the numbers, and what was compared. */
function Outcome({ outcome }: { outcome: FixOutcome }) {
  const numbers = outcomeNumbers(outcome);
  return (
    <div className="ledger__outcome small" aria-label="Outcome">
      <span className={VERDICT_BADGE[outcome.verdict]}>{VERDICT_NAMES[outcome.verdict]}</span>{' '}
      {numbers && outcome.measure ? (
        <span>
          {numbers} ({outcome.measure})
        </span>
      ) : (
        <span className="muted">{outcome.summary.replace(/^[^:]*:\s*/, '')}</span>
      )}
    </div>
  );
}

function Entry({ clusterId, entry }: { clusterId: string; entry: ChangeEntry }) {
  const effect = entry.effect;
  return (
    <li className="ledger__entry">
      <p>
        <strong>{KIND_NAMES[entry.kind]}</strong> · {formatTimestamp(entry.at)} · {entry.who}
        {entry.patch_id && (
          <>
            {' '}
            · <Link to={`/clusters/${clusterId}/patches/${entry.patch_id}`}>the patch</Link>
          </>
        )}
      </p>
      <ul className="ledger__changes" aria-label="What changed">
        {entry.changes.map((c) => (
          <li key={c.key}>
            <code>{c.key}</code>
            {entry.entity_id ? ` on ${entry.entity_id}` : ''}: {c.before_text} → {c.after_text}
          </li>
        ))}
      </ul>
      {entry.seen_by_headroom.length > 0 && (
        <p className="muted small">Headroom saw it take effect: {entry.seen_by_headroom.join('; ')}.</p>
      )}
      {entry.findings.length > 0 && (
        <div>
          <h4 className="ledger__heading">Findings it addressed</h4>
          <ul>
            {entry.findings.map((f) => (
              <li key={f.id}>
                <Link to={`/clusters/${clusterId}/findings/${f.id}`}>{f.title}</Link> —{' '}
                {f.resolved_after_change
                  ? `resolved ${formatTimestamp(f.resolved_at)}`
                  : f.status === 'resolved'
                    ? 'resolved'
                    : `still ${f.status}`}
                {f.predicted && <div className="muted small">Predicted: {f.predicted.summary}</div>}
                {f.outcome && <Outcome outcome={f.outcome} />}
              </li>
            ))}
          </ul>
        </div>
      )}
      {entry.predicted ? (
        <div>
          <h4 className="ledger__heading">Expected (the what-if on the day before the change)</h4>
          <ul aria-label="Expected effect">
            {entry.predicted.ceilings.map((c) => (
              <li key={`${c.entity_id}:${c.dimension}`}>
                {c.entity_id} {c.dimension === 'iops' ? 'IOPS' : 'throughput'} ceiling{' '}
                {formatValue(c.ceiling, c.unit)} → {formatValue(c.ceiling_after, c.unit)}
                {c.instance_limit !== null && c.instance_limit_after !== null && c.volumes_limit !== null && c.volumes_limit_after !== null
                  ? ` in force, the smaller of the instance's own EBS limit (${formatValue(c.instance_limit, c.unit)} → ${formatValue(c.instance_limit_after, c.unit)}) and its volumes together (${formatValue(c.volumes_limit, c.unit)} → ${formatValue(c.volumes_limit_after, c.unit)})`
                  : ''}
                {c.headroom_pct !== null && c.headroom_after_pct !== null
                  ? ` (the day's p99 uses ${peakUse(c.headroom_pct, 'it')} → ${peakUse(c.headroom_after_pct, 'it')})`
                  : ''}
              </li>
            ))}
            <li>
              Findings it was expected to clear: {entry.predicted.resolved.length}
              {entry.predicted.new.length > 0 ? `; new: ${entry.predicted.new.length}` : ''}; monthly cost{' '}
              {formatUsdChange(entry.predicted.cost.delta_usd)}
            </li>
          </ul>
        </div>
      ) : entry.predicted_note ? (
        <p className="muted small">Expected effect: {entry.predicted_note}.</p>
      ) : null}
      {effect && (
        <div>
          <h4 className="ledger__heading">Measured: peak use of each ceiling, before → after</h4>
          {effect.cells.length > 0 && effect.cells[0] && (
            <BeforeAfterChart
              clusterId={clusterId}
              cell={largestMove(effect.cells)}
              before={{ start: effect.before_start, end: effect.before_end }}
              after={{ start: effect.after_start, end: effect.after_end }}
            />
          )}
          {effect.cells.length > 0 ? (
            <div className="table-scroll" tabIndex={0} role="region" aria-label="Measured effect">
              <table className="table">
                <thead>
                  <tr>
                    <th scope="col">Store</th>
                    <th scope="col">Ceiling</th>
                    <th scope="col">Before → after</th>
                  </tr>
                </thead>
                <tbody>
                  {effect.cells.map((c) => (
                    <tr key={`${c.node}:${c.metric}`}>
                      <th scope="row">{c.node}</th>
                      <td>
                        {metricName(c.metric)}
                        {c.ceiling_after && <div className="muted small">now: {c.ceiling_after}</div>}
                      </td>
                      <td>{peakText(c)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
          <p className="muted small">
            Before: {formatTimestamp(effect.before_start)} – {formatTimestamp(effect.before_end)} (the same hours one
            week earlier); after: {formatTimestamp(effect.after_start)} – {formatTimestamp(effect.after_end)}.
            {effect.note ? ` ${effect.note}` : ''}
          </p>
        </div>
      )}
    </li>
  );
}

/** The cluster's change ledger: patches applied and changes Headroom saw, with their findings and effect. */
export function ChangeLedger({ clusterId, limit = 10 }: { clusterId: string; limit?: number }) {
  const query = useChanges(clusterId);
  if (query.isPending) return <LoadingState label="Loading changes…" />;
  if (query.isError) return <QueryError title="Could not load the changes" query={query} />;
  const { items, days } = query.data;
  if (items.length === 0) {
    return (
      <EmptyState title="No changes yet" headingLevel={3}>
        Mark a patch applied, or change a volume, an instance or a TiKV setting: Headroom lists it here with the
        findings it addressed and its effect, measured against the same hours one week earlier.
      </EmptyState>
    );
  }
  return (
    <>
      <ol className="ledger" aria-label="Changes">
        {items.slice(0, limit).map((e) => (
          <Entry key={e.id} clusterId={clusterId} entry={e} />
        ))}
      </ol>
      <p className="muted small">
        The last {days} days{items.length > limit ? `; ${items.length - limit} older changes not shown` : ''}.
      </p>
    </>
  );
}
