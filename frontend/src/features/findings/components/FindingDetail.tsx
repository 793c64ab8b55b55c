import { Link } from 'react-router';
import { CEILING_KIND, CeilingText } from '@/components/CeilingText';
import { ScrollRegion } from '@/components/ScrollRegion';
import { SourceText } from '@/components/SourceText';
import { changePlace, settingText } from '@/lib/change';
import { DECIDES, decidesPage } from '@/lib/decides';
import { formatDateTime, formatUsd, formatValue, peakUse } from '@/lib/format';
import { whatIfHref } from '@/lib/whatif-link';
import type { Finding } from '../api';
import { describeForecast, describeNeeds, type Impact, type Measure, type NodeEvidence } from '../evidence';
import { EvidenceCharts } from './EvidenceCharts';
import { FindingActions } from './FindingActions';
import { RelatedFindings } from './RelatedFindings';
import { historyText, STATUS_LABEL } from './labels';
import { SeverityBadge } from './SeverityBadge';

function fmt(value: number | null, unit: string | null): string {
  return value === null ? '—' : formatValue(value, unit ?? '');
}

function usd(value: number | null): string {
  return value === null ? '—' : formatUsd(value);
}

function MeasuresTable({ measures }: { measures: Measure[] }) {
  return (
    <ScrollRegion label="Measures table">
      <table className="table">
        <caption className="visually-hidden">Measures against limits</caption>
        <thead>
          <tr>
            <th scope="col">Measure</th>
            <th scope="col">Value</th>
            <th scope="col">Limit</th>
            <th scope="col">Source of the limit</th>
          </tr>
        </thead>
        <tbody>
          {measures.map((m, i) => (
            <tr key={`${m.label}-${i}`}>
              <th scope="row">
                {m.label}
                {m.statistic && <span className="muted"> ({m.statistic})</span>}
              </th>
              <td className="num">{fmt(m.value, m.unit)}</td>
              <td className="num">
                {m.limit === null ? (
                  <span className="muted">—</span>
                ) : (
                  <span title={m.limit_label ? `${m.limit_label}${m.source ? ` (${m.source})` : ''}` : undefined}>
                    {fmt(m.limit, m.unit)}
                    {m.limit_label && <span className="muted"> {m.limit_label}</span>}
                    {m.ceiling && <span className="muted"> ({CEILING_KIND[m.ceiling.kind]})</span>}
                  </span>
                )}
              </td>
              <td>
                {m.ceiling ? (
                  <CeilingText ceiling={m.ceiling} />
                ) : m.source ? (
                  <SourceText text={m.source} />
                ) : (
                  <span className="muted">measured</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

/** A cluster-level config finding: each store's own reading and what it alone would need (one value for all). */
function PerNodeTable({ nodes }: { nodes: NodeEvidence[] }) {
  return (
    <ScrollRegion label="Per store table">
      <table className="table">
        <caption>
          Per store (one value for the group: <SourceText text={`${DECIDES}: ${decidesPage('cluster-config')?.title ?? ''}`} />)
        </caption>
        <thead>
          <tr>
            <th scope="col">Store</th>
            <th scope="col">Instance type</th>
            <th scope="col">Severity</th>
            <th scope="col">What it showed</th>
            <th scope="col">Share of the window</th>
            <th scope="col">It alone needs</th>
          </tr>
        </thead>
        <tbody>
          {nodes.map((n) => (
            <tr key={n.node}>
              <th scope="row" className="mono">
                {n.node}
              </th>
              <td>{n.instance_type}</td>
              <td>
                <SeverityBadge severity={n.severity} />
              </td>
              <td>{n.title}</td>
              <td className="num">{n.share_of_window === null ? '—' : formatValue(100 * n.share_of_window, '%')}</td>
              <td className="mono">{describeNeeds(n)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

function ImpactBlock({ impact }: { impact: Impact }) {
  return (
    <dl className="facts">
      {impact.summary && (
        <>
          <dt>Summary</dt>
          <dd>{impact.summary}</dd>
        </>
      )}
      {impact.metric && (
        <>
          <dt>{impact.metric}</dt>
          <dd>
            {fmt(impact.before, impact.unit)} → {fmt(impact.after, impact.unit)}
          </dd>
        </>
      )}
      {impact.headroom_before_pct !== null && impact.headroom_after_pct !== null && (
        <>
          <dt>Peak use of the limit</dt>
          <dd>
            {peakUse(impact.headroom_before_pct)} now → {peakUse(impact.headroom_after_pct)} after the fix
          </dd>
        </>
      )}
      {impact.monthly_cost_delta_usd !== null && (
        <>
          <dt>Cost per month</dt>
          <dd>
            {usd(impact.monthly_cost_before_usd)} → {usd(impact.monthly_cost_after_usd)} ({impact.monthly_cost_delta_usd >= 0 ? '+' : ''}
            {usd(impact.monthly_cost_delta_usd)})
            {impact.price_region && <span className="muted"> at {impact.price_region} on-demand prices</span>}
          </dd>
        </>
      )}
    </dl>
  );
}

/** Everything about one finding: evidence with limits and their sources, why, impact, changes, options. */
export function FindingDetail({
  finding,
  canManage,
  patchPath,
}: {
  finding: Finding;
  canManage: boolean;
  patchPath: (patchId: string) => string;
}) {
  const { evidence, impact } = finding;
  const measures = evidence?.measures ?? [];
  const options = finding.options ?? [];
  return (
    <article className="finding" aria-labelledby="finding-title">
      <header className="finding__header">
        <SeverityBadge severity={finding.severity} />
        <h2 id="finding-title">{finding.title}</h2>
        <p className="muted">
          <span className="mono">{finding.rule}</span> · {STATUS_LABEL[finding.status]} · confidence{' '}
          {Math.round(finding.confidence * 100)}% · first seen {formatDateTime(finding.first_seen_at)} · last seen{' '}
          {formatDateTime(finding.last_seen_at)}
        </p>
        <FindingActions finding={finding} canManage={canManage} />
      </header>

      {finding.group && (
        <RelatedFindings
          clusterId={finding.cluster_id}
          group={finding.group}
          related={finding.related ?? []}
          selfKey={finding.dedup_key}
        />
      )}

      <section aria-labelledby="evidence-heading" className="card">
        <h3 id="evidence-heading">Evidence</h3>
        {evidence && <p>Condition: {evidence.condition}</p>}
        {evidence && (
          <p className="muted">
            Window: {formatDateTime(evidence.window_start)} to {formatDateTime(evidence.window_end)}
          </p>
        )}
        {measures.length > 0 ? (
          <MeasuresTable measures={measures} />
        ) : (
          <p className="muted">This finding carries no measures.</p>
        )}
        {(evidence?.per_node ?? []).length > 0 && <PerNodeTable nodes={evidence?.per_node ?? []} />}
        <EvidenceCharts findingId={finding.id} />
        {(evidence?.corroboration ?? []).length > 0 && (
          <ul aria-label="Corroboration">
            {evidence?.corroboration.map((c) => (
              <li key={c}>{c}</li>
            ))}
          </ul>
        )}
        {(evidence?.forecasts ?? []).length > 0 && (
          <ul aria-label="Forecasts">
            {evidence?.forecasts.map((f, i) => (
              <li key={`${f.kind}-${i}`} title={`${f.method}${f.source ? ` (${f.source})` : ''}`}>
                {describeForecast(f)}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="why-heading" className="card">
        <h3 id="why-heading">Why it matters</h3>
        <p>{finding.why}</p>
        {(finding.sources ?? []).length > 0 && (
          <div className="muted">
            Sources:
            <ul>
              {(finding.sources ?? []).map((source) => (
                <li key={source}>
                  <SourceText text={source} />
                </li>
              ))}
            </ul>
          </div>
        )}
        {(finding.notes ?? []).map((note) => (
          <p key={note} className="muted">
            {note}
          </p>
        ))}
      </section>

      <section aria-labelledby="impact-heading" className="card">
        <h3 id="impact-heading">Impact of the fix</h3>
        {impact ? <ImpactBlock impact={impact} /> : <p className="muted">No impact estimate.</p>}
      </section>

      <section aria-labelledby="changes-heading" className="card">
        <h3 id="changes-heading">Changes</h3>
        {finding.changes.length === 0 ? (
          <p className="muted">This finding recommends no configuration change.</p>
        ) : (
          <ScrollRegion label="Recommended changes table">
            <table className="table">
              <caption className="visually-hidden">Recommended changes</caption>
              <thead>
                <tr>
                  <th scope="col">Setting</th>
                  <th scope="col">On</th>
                  <th scope="col">Current</th>
                  <th scope="col">Proposed</th>
                  <th scope="col">Applies</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                {finding.changes.map((c, i) => (
                  <tr key={`${i}-${c.key}`}>
                    <th scope="row" className="mono">
                      {c.target === 'aws' ? 'AWS ' : 'tikv.toml '}
                      {c.key}
                    </th>
                    <td className="mono">{changePlace(c) ?? 'all nodes'}</td>
                    <td className="mono">{settingText(c.current, c.key)}</td>
                    <td className="mono">{settingText(c.proposed, c.key)}</td>
                    <td>{c.online ? 'online' : 'needs a restart'}</td>
                    <td>{c.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
        )}
      </section>

      {options.length > 0 && (
        <section aria-labelledby="options-heading" className="card">
          <h3 id="options-heading">Options</h3>
          <ol className="options">
            {options.map((option) => (
              <li key={option.label}>
                <strong>{option.label}</strong>
                {option.impact.summary && <p className="muted">{option.impact.summary}</p>}
                {option.changes.length > 0 && (
                  <ul>
                    {option.changes.map((c, i) => (
                      <li key={`${c.key}-${i}`} className="mono">
                        {c.key}: {settingText(c.current, c.key)} → {settingText(c.proposed, c.key)}
                      </li>
                    ))}
                  </ul>
                )}
                {option.notes.map((n) => (
                  <p key={n} className="muted">
                    {n}
                  </p>
                ))}
                {option.changes.length > 0 && (
                  <p>
                    <Link to={whatIfHref(finding.cluster_id, option.changes)}>
                      Try this in what-if<span className="visually-hidden">: {option.label}</span>
                    </Link>
                  </p>
                )}
              </li>
            ))}
          </ol>
        </section>
      )}

      {(finding.patches ?? []).length > 0 && (
        <section aria-labelledby="patches-heading" className="card">
          <h3 id="patches-heading">Patches made from this finding</h3>
          <ul>
            {(finding.patches ?? []).map((p) => (
              <li key={p.id}>
                <Link to={patchPath(p.id)}>Patch of {formatDateTime(p.created_at)}</Link>
                {p.applied_at ? ` · applied ${formatDateTime(p.applied_at)}` : ' · not applied yet'}
              </li>
            ))}
          </ul>
        </section>
      )}

      <section aria-labelledby="history-heading" className="card">
        <h3 id="history-heading">History</h3>
        <ol className="history">
          {finding.history.map((h, i) => (
            <li key={`${h.at}-${i}`}>
              <time dateTime={h.at}>{formatDateTime(h.at)}</time> {historyText(h)}
            </li>
          ))}
        </ol>
      </section>
    </article>
  );
}
