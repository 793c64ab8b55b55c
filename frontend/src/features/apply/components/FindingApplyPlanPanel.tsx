import { useState, type FormEvent, type ReactNode } from 'react';
import { QueryError } from '@/components/ErrorState';
import { FormError } from '@/components/FormError';
import { LoadingState } from '@/components/LoadingState';
import { ScrollRegion } from '@/components/ScrollRegion';
import { changeText, settingLabel, settingText } from '@/lib/change';
import { formatTimestamp } from '@/lib/format';
import {
  pendingUndo,
  undoLabel,
  undoText,
  useApplyPlanPreview,
  useApplyPlans,
  useDecidePlan,
  usePlanAction,
  useProposePlan,
  type ApplyPlan,
  type MaintenanceWindow,
  type PlanStep,
  type StepRun,
} from '../api';

const WEEKDAYS: MaintenanceWindow['weekdays'] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const STATUS_WORDS: Record<ApplyPlan['status'], string> = {
  proposed: 'Waiting for approval',
  approved: 'Approved',
  rejected: 'Rejected',
  cancelled: 'Withdrawn',
  running: 'Running',
  succeeded: 'Done',
  failed: 'Failed',
  rolled_back: 'Rolled back',
  stopped: 'Stopped',
};
/** A step being watched: until when, or, past its set period, that it waits for the guards' first data after the step
 * (the plan's status line names them; docs/thresholds/apply-guards.md, late data). */
function watchText(watchUntil: string, nowMs: number): string {
  if (Date.parse(watchUntil) > nowMs) return ` until ${formatTimestamp(watchUntil)}`;
  return `: the set period ended ${formatTimestamp(watchUntil)}; waiting for the first data after the step`;
}

const STEP_WORDS: Record<StepRun['status'], string> = {
  pending: 'Not started',
  running: 'Being applied',
  verifying: 'Applied, watching',
  done: 'Done',
  failed: 'Failed',
  undoing: 'Being undone',
  undone: 'Undone',
  skipped: 'Not started (rolled back)',
  stopped: 'Not started (stopped)',
  unknown: 'Unknown (stopped mid-step)',
};

function StepsTable({ steps }: { steps: PlanStep[] }) {
  // In a box that scrolls by itself: on a phone the four columns are wider than the page.
  return (
    <ScrollRegion label="Steps, one at a time, in order">
      <table className="table">
        <caption className="visually-hidden">Steps, one at a time, in order</caption>
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">Change</th>
            <th scope="col">Where</th>
            <th scope="col">Undo</th>
          </tr>
        </thead>
        <tbody>
          {steps.map((step) => (
            <tr key={step.position}>
              <td>{step.position}</td>
              <td>
                {step.kind === 'ebs_modify_volume' ? 'Volume: ' : 'TiKV setting: '}
                {changeText(step.change.key, step.change.current, step.change.proposed)}
              </td>
              <td>
                <code>{step.target}</code>
              </td>
              <td title={step.undo_note}>{undoText(step.undo_after_seconds)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

/** `answeredAt`: when the server answered with this plan (ms), the moment its statuses were true. */
function StepRuns({ plan, answeredAt }: { plan: ApplyPlan; answeredAt: number }) {
  return (
    <ScrollRegion label="How far each step has run">
      <table className="table">
        <caption className="visually-hidden">How far each step has run</caption>
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">Status</th>
            <th scope="col">Read</th>
            <th scope="col">Guards</th>
          </tr>
        </thead>
        <tbody>
          {plan.step_runs.map((run) => {
            const step = plan.steps.find((s) => s.position === run.position);
            const key = step?.change.key ?? '';
            return (
              <tr key={run.position}>
                <td>
                  {run.position}
                  {step && (
                    <>
                      {' '}
                      <code>{step.target}</code>
                    </>
                  )}
                </td>
                <td>
                  {STEP_WORDS[run.status]}
                  {run.status === 'verifying' && run.watch_until && watchText(run.watch_until, answeredAt)}
                  {run.error && <div className="form-error">{run.error}</div>}
                  {run.note && <div className="muted">{run.note}</div>}
                </td>
                <td>
                  {run.read_back !== null
                    ? changeText(key, run.before, run.read_back)
                    : run.before !== null
                      ? `${settingLabel(key)} was ${settingText(run.before, key)}`
                      : '—'}
                  {run.restored !== null && `; set back to ${settingText(run.restored, key)}`}
                  {run.modification_state && ` (AWS: ${run.modification_state})`}
                </td>
                <td>
                  {run.guard_readings.length === 0 ? (
                    '—'
                  ) : (
                    <ul>
                      {run.guard_readings.map((g) => (
                        <li key={g.metric} className={g.tripped ? 'guard--tripped' : undefined}>
                          {g.verdict}
                        </li>
                      ))}
                    </ul>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

/** One of a plan's action buttons (run, stop, undo, approve, reject): disabled while an action is on its way. */
function PlanButton({
  kind,
  busy,
  onClick,
  children,
}: {
  kind?: 'primary' | 'danger';
  busy: boolean;
  onClick: () => void;
  children: ReactNode;
}) {
  return (
    <button type="button" className={kind ? `button button--${kind}` : 'button'} disabled={busy} onClick={onClick}>
      {children}
    </button>
  );
}

function RunControls({ plan, canManage, answeredAt }: { plan: ApplyPlan; canManage: boolean; answeredAt: number }) {
  const act = usePlanAction();
  const undo = pendingUndo(plan);
  return (
    <>
      {plan.outcome && (
        <p role="status" aria-live="polite">
          {plan.outcome}
        </p>
      )}
      {undo.earliest && (
        <p>
          Volume change{undo.positions.length === 1 ? '' : 's'} can be undone from {formatTimestamp(undo.earliest)}{' '}
          (AWS allows one modification of a volume every six hours); an earlier undo is refused.
        </p>
      )}
      {canManage && (
        <span className="button-row">
          {plan.status === 'approved' && (
            <PlanButton kind="primary" busy={act.isPending} onClick={() => act.mutate({ planId: plan.id, action: 'run' })}>
              Run
            </PlanButton>
          )}
          {plan.status === 'running' && (
            <PlanButton kind="danger" busy={act.isPending} onClick={() => act.mutate({ planId: plan.id, action: 'stop' })}>
              Stop
            </PlanButton>
          )}
          {(undo.earliest || undo.settings.length > 0) && plan.status !== 'running' && (
            <PlanButton busy={act.isPending} onClick={() => act.mutate({ planId: plan.id, action: 'undo' })}>
              {undoLabel(undo)}
            </PlanButton>
          )}
        </span>
      )}
      <FormError error={act.error} />
      {plan.run_started_at && <StepRuns plan={plan} answeredAt={answeredAt} />}
    </>
  );
}

function PlanDecision({ plan, canManage, answeredAt }: { plan: ApplyPlan; canManage: boolean; answeredAt: number }) {
  const decide = useDecidePlan();
  return (
    <li>
      <strong>{STATUS_WORDS[plan.status]}</strong>: proposed by {plan.proposed_by ?? 'a former member'} on{' '}
      {new Date(plan.proposed_at).toUTCString()}
      {plan.decided_by && `; decided by ${plan.decided_by}`}.
      {canManage && plan.status === 'proposed' && (
        <span className="button-row">
          <PlanButton kind="primary" busy={decide.isPending} onClick={() => decide.mutate({ planId: plan.id, decision: 'approve' })}>
            Approve
          </PlanButton>
          <PlanButton busy={decide.isPending} onClick={() => decide.mutate({ planId: plan.id, decision: 'reject' })}>
            Reject
          </PlanButton>
        </span>
      )}
      <FormError error={decide.error} />
      <RunControls plan={plan} canManage={canManage} answeredAt={answeredAt} />
    </li>
  );
}

function ProposeForm({ clusterId, findingId }: { clusterId: string; findingId: string }) {
  const propose = useProposePlan(clusterId);
  const [useWindow, setUseWindow] = useState(false);
  const [start, setStart] = useState('22:00');
  const [end, setEnd] = useState('02:00');
  const [days, setDays] = useState<MaintenanceWindow['weekdays']>(['sat', 'sun']);
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    propose.mutate({
      finding_id: findingId,
      maintenance_window: useWindow ? { start, end, weekdays: days } : null,
    });
  };
  return (
    <form className="form" onSubmit={onSubmit} noValidate aria-label="Propose this plan">
      <FormError error={propose.error} />
      <label className="field field--checkbox">
        <input type="checkbox" checked={useWindow} onChange={(e) => setUseWindow(e.target.checked)} /> Only in a
        maintenance window (UTC)
      </label>
      {useWindow && (
        <fieldset className="form--inline">
          <legend>Maintenance window (UTC)</legend>
          <label>
            From <input type="time" value={start} onChange={(e) => setStart(e.target.value)} />
          </label>
          <label>
            to <input type="time" value={end} onChange={(e) => setEnd(e.target.value)} />
          </label>
          {WEEKDAYS.map((day) => (
            <label key={day}>
              <input
                type="checkbox"
                checked={days.includes(day)}
                onChange={(e) =>
                  setDays(e.target.checked ? [...days, day] : days.filter((d) => d !== day))
                }
              />{' '}
              {day.charAt(0).toUpperCase() + day.slice(1)}
            </label>
          ))}
        </fieldset>
      )}
      <button type="submit" className="button button--primary" disabled={propose.isPending}>
        {propose.isPending ? 'Proposing…' : 'Propose this plan'}
      </button>
      {propose.isSuccess && (
        <p role="status" className="muted">
          Proposed: another owner or admin approves it.
        </p>
      )}
    </form>
  );
}

/** What applying a finding's fix would do (steps, refusals, guards, predicted effect), and its plans. */
export function FindingApplyPlanPanel({
  clusterId,
  findingId,
  canManage,
}: {
  clusterId: string;
  findingId: string;
  canManage: boolean;
}) {
  const preview = useApplyPlanPreview(findingId);
  const plans = useApplyPlans(clusterId);
  if (preview.isPending) return <LoadingState label="Loading the apply plan" />;
  if (preview.isError) return <QueryError title="Could not load the apply plan" query={preview} />;
  const plan = preview.data;
  const mine = (plans.data ?? []).filter((p) => p.finding_id === findingId);
  const cost = plan.predicted?.monthly_cost_delta_usd;
  return (
    <section className="card" aria-labelledby="apply-plan">
      <h2 id="apply-plan">Apply this fix</h2>
      {plan.steps.length > 0 ? <StepsTable steps={plan.steps} /> : <p className="muted">No step Headroom can apply.</p>}
      {plan.refusals.length > 0 && (
        <>
          <h3>Stays a downloadable patch</h3>
          <ul>
            {plan.refusals.map((r) => (
              <li key={`${r.key}-${r.target ?? ''}`}>{r.reason}</li>
            ))}
          </ul>
        </>
      )}
      {plan.predicted && (
        <p>
          Predicted: {plan.predicted.summary}
          {cost !== null && cost !== undefined && ` (${cost <= 0 ? 'saves' : 'costs'} $${Math.abs(cost).toFixed(2)} a month)`}
          .
        </p>
      )}
      <h3>Guards after each step</h3>
      <ul>
        {plan.guards.map((g) => (
          <li key={g.metric}>{g.rule}</li>
        ))}
      </ul>
      {plan.blocked.length > 0 ? (
        <>
          <h3>Why it cannot be proposed now</h3>
          <ul>
            {plan.blocked.map((reason) => (
              <li key={reason}>{reason}</li>
            ))}
          </ul>
        </>
      ) : (
        canManage && <ProposeForm clusterId={clusterId} findingId={findingId} />
      )}
      {mine.length > 0 && (
        <>
          <h3>Plans for this finding</h3>
          <ul>
            {mine.map((p) => (
              <PlanDecision key={p.id} plan={p} canManage={canManage} answeredAt={plans.dataUpdatedAt} />
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
