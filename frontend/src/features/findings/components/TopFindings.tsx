import { Link } from 'react-router';
import { errorMessage } from '@/api/errors';
import { EmptyState } from '@/components/EmptyState';
import { ErrorState } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { SEVERITIES, useFindingDetails, useFindings } from '../api';
import { impactGain, readImpact } from '../evidence';
import { findingPath } from './labels';
import { SeverityBadge } from './SeverityBadge';

const ACTIVE = { status: ['open' as const, 'acknowledged' as const], severity: [], rule: [] };
// Rank at most this many of the most severe findings by impact: one detail request each (UI choice, keeps the
// overview to a bounded number of requests however many findings a cluster has).
const CANDIDATES = 20;

/** The open findings whose fixes win back the most headroom (ties: most severe first). */
export function TopFindings({ clusterId, limit = 5 }: { clusterId: string; limit?: number }) {
  const findings = useFindings(clusterId, ACTIVE);
  const candidates = [...(findings.data?.items ?? [])]
    .sort((a, b) => SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity))
    .slice(0, CANDIDATES);
  const details = useFindingDetails(candidates.map((f) => f.id));

  if (findings.isPending) return <LoadingState label="Loading findings…" />;
  if (findings.isError) {
    return (
      <ErrorState
        title="Could not load findings"
        message={errorMessage(findings.error)}
        onRetry={() => void findings.refetch()}
      />
    );
  }
  if (candidates.length === 0) {
    return (
      <EmptyState title="No open findings" headingLevel={3}>
        <p>The advisor found nothing to fix. Run it again after new data arrives.</p>
      </EmptyState>
    );
  }
  if (details.some((d) => d.isPending)) return <LoadingState label="Ranking findings by impact…" />;

  const ranked = candidates
    .map((summary, i) => {
      const impact = readImpact(details[i]?.data?.impact);
      return { summary, impact, gain: impactGain(impact) };
    })
    .sort(
      (a, b) =>
        b.gain - a.gain || SEVERITIES.indexOf(a.summary.severity) - SEVERITIES.indexOf(b.summary.severity),
    )
    .slice(0, limit);

  return (
    <ol className="top-findings" aria-label="Top findings by impact">
      {ranked.map(({ summary, impact }) => (
        <li key={summary.id} className="top-findings__item">
          <SeverityBadge severity={summary.severity} />
          <div>
            <Link to={findingPath(clusterId, summary.id)}>{summary.title}</Link>
            {impact?.summary && <p className="muted">Impact: {impact.summary}</p>}
          </div>
        </li>
      ))}
    </ol>
  );
}
