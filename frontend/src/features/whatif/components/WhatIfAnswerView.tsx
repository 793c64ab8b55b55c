import { Link } from 'react-router';
import { CeilingText } from '@/components/CeilingText';
import { formatDateTime, formatDaysUntil, formatQuantity, formatUsd, formatUsdChange, formatValue, peakUse } from '@/lib/format';
import type { WhatIfAnswer, WhatIfCeiling, WhatIfFinding, WhatIfProjection } from '../api';

const SEVERITY = { critical: 'Critical', warning: 'Warning', info: 'Info' } as const;
const ENTITY = { volume: 'Volume', instance: 'Instance EBS', node: 'Store' } as const;
const METRIC = { iops: 'IOPS', throughput: 'throughput', mibps: 'throughput', used_gib: 'disk space' } as const;

const BINDS = { instance: "the instance's own limit", volumes: 'its volumes together', both: 'both (equal)' } as const;

function Moved({ before, after, unit }: { before: number | null; after: number | null; unit: string }) {
  const shown = (v: number | null) => (v === null ? '—' : formatValue(v, unit));
  return (
    <>
      <span className="num">{shown(before)}</span> → <span className="num">{shown(after)}</span>
    </>
  );
}

/**
 * An instance has two EBS ceilings, each shown under its own name: the instance type's own limit and the sum of its
 * attached volumes'; the smaller is the one in force (AWS: Amazon EBS-optimized instances).
 */
function InstanceParts({ c }: { c: WhatIfCeiling }) {
  return (
    <ul className="muted small" aria-label={`The two ceilings of ${c.entity_id}`}>
      <li>
        the instance&apos;s own EBS limit: <Moved before={c.instance_limit} after={c.instance_limit_after} unit={c.unit} />
      </li>
      <li>
        its volumes together: <Moved before={c.volumes_limit} after={c.volumes_limit_after} unit={c.unit} />
      </li>
      {c.binding && c.binding_after && (
        <li>
          in force: {BINDS[c.binding]} → {BINDS[c.binding_after]}
        </li>
      )}
    </ul>
  );
}

function CeilingItem({ c }: { c: WhatIfCeiling }) {
  const instance = c.entity_kind === 'instance' && c.instance_limit !== null;
  return (
    <li>
      <strong>
        {ENTITY[c.entity_kind]} <span className="mono">{c.entity_id}</span> {METRIC[c.dimension]}
      </strong>
      <div>
        {instance ? 'in force (the smaller): ' : ''}
        <Moved before={c.ceiling} after={c.ceiling_after} unit={c.unit} />
      </div>
      {instance && <InstanceParts c={c} />}
      {c.entity_kind === 'volume' && c.instance_limit !== null && (
        <div className="muted small">
          its instance&apos;s own EBS limit: <Moved before={c.instance_limit} after={c.instance_limit_after} unit={c.unit} /> (its
          I/O meets the smaller first)
        </div>
      )}
      <ul className="muted small" aria-label={`Where the ceilings of ${c.entity_id} come from`}>
        <li>
          before: <CeilingText ceiling={c.in_force} />
        </li>
        {c.in_force_after.source !== c.in_force.source || c.in_force_after.label !== c.in_force.label ? (
          <li>
            after: <CeilingText ceiling={c.in_force_after} />
          </li>
        ) : null}
      </ul>
      <div className="muted small">
        the last day&apos;s p99 uses {peakUse(c.headroom_pct, 'the ceiling')} → {peakUse(c.headroom_after_pct, 'the ceiling')}: p99
        of{' '}
        <span className="num">{formatValue(c.p99, c.unit)}</span>
      </div>
    </li>
  );
}

function FindingItem({ f, findingHref }: { f: WhatIfFinding; findingHref: (id: string) => string }) {
  return (
    <li>
      <span className={`severity severity--${f.severity}`}>{SEVERITY[f.severity]}</span>{' '}
      {f.finding_id ? <Link to={findingHref(f.finding_id)}>{f.title}</Link> : <span>{f.title}</span>}
    </li>
  );
}

function ProjectionItem({ p }: { p: WhatIfProjection }) {
  return (
    <li>
      <strong>
        {ENTITY[p.entity_kind]} <span className="mono">{p.entity_id}</span> {METRIC[p.metric]}
      </strong>
      <div>
        ceiling <span className="num">{formatValue(p.ceiling, p.unit)}</span> →{' '}
        <span className="num">{formatValue(p.ceiling_after, p.unit)}</span>
      </div>
      <div>
        ceiling reached: {formatDaysUntil(p.before, p.horizon_days)} →{' '}
        <strong>{formatDaysUntil(p.after, p.horizon_days)}</strong>
      </div>
    </li>
  );
}

function FindingGroup({
  title,
  items,
  empty,
  findingHref,
}: {
  title: string;
  items: WhatIfFinding[];
  empty: string;
  findingHref: (id: string) => string;
}) {
  const id = `whatif-${title.toLowerCase()}`;
  return (
    <section aria-labelledby={id} className="whatif-group">
      <h4 id={id}>
        {title} ({items.length})
      </h4>
      {items.length === 0 ? (
        <p className="muted">{empty}</p>
      ) : (
        <ul className="plain-list whatif-list">
          {items.map((f) => (
            <FindingItem key={f.dedup_key} f={f} findingHref={findingHref} />
          ))}
        </ul>
      )}
    </section>
  );
}

/** What the changes would do: ceilings, findings, projections and the monthly cost, before and after. */
export function WhatIfAnswerView({ answer, findingHref }: { answer: WhatIfAnswer; findingHref: (id: string) => string }) {
  const { cost } = answer;
  return (
    <div className="whatif-answer">
      <p className="muted small">
        On the data of {formatDateTime(answer.window_start)} to {formatDateTime(answer.window_end)}.
      </p>
      <section aria-labelledby="whatif-cost" className="card">
        <h3 id="whatif-cost">Monthly cost</h3>
        <dl className="whatif-cost">
          <div>
            <dt>Before</dt>
            <dd className="num">{formatUsd(cost.before_usd)}</dd>
          </div>
          <div>
            <dt>After</dt>
            <dd className="num">{formatUsd(cost.after_usd)}</dd>
          </div>
          <div>
            <dt>Change</dt>
            <dd className="num">
              <strong>{formatUsdChange(cost.delta_usd)}</strong> a month
            </dd>
          </div>
        </dl>
        <p className="muted small">On-demand EBS and EC2 prices (AWS price lists).</p>
        {cost.unpriced.length > 0 && (
          <>
            <p className="small">Not priced (not counted as free):</p>
            <ul className="small" aria-label="Not priced">
              {cost.unpriced.map((u) => (
                <li key={u}>{u}</li>
              ))}
            </ul>
          </>
        )}
      </section>

      <section aria-labelledby="whatif-ceilings" className="card">
        <h3 id="whatif-ceilings">Ceilings</h3>
        {answer.ceilings.length === 0 ? (
          <p className="muted">No sustained IOPS or throughput ceiling moves.</p>
        ) : (
          <ul className="plain-list whatif-list" aria-label="Ceilings that move">
            {answer.ceilings.map((c) => (
              <CeilingItem key={`${c.entity_kind}-${c.entity_id}-${c.dimension}`} c={c} />
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="whatif-findings" className="card">
        <h3 id="whatif-findings">Findings</h3>
        <FindingGroup title="Resolved" items={answer.resolved} empty="None of today's findings clears." findingHref={findingHref} />
        <FindingGroup title="New" items={answer.new} empty="The changes cause no new finding." findingHref={findingHref} />
        <FindingGroup title="Remaining" items={answer.remaining} empty="No finding remains." findingHref={findingHref} />
      </section>

      <section aria-labelledby="whatif-projections" className="card">
        <h3 id="whatif-projections">Projections</h3>
        {answer.projections.length === 0 ? (
          <p className="muted">
            No projected ceiling moves (projections are fitted once a day; a new cluster has none yet).
          </p>
        ) : (
          <>
            <ul className="plain-list whatif-list" aria-label="Projections that move">
              {answer.projections.map((p) => (
                <ProjectionItem key={`${p.entity_kind}-${p.entity_id}-${p.metric}`} p={p} />
              ))}
            </ul>
            <p className="muted small">
              Days from the end of the fitted history, {formatQuantity((answer.projections[0]?.interval ?? 0.9) * 100, '%')}
              interval in brackets, read off the stored forecast at its 6-hour step (no refit).
            </p>
          </>
        )}
      </section>
    </div>
  );
}
