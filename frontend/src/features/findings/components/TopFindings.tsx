import { Link } from 'react-router';
import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { peakUse } from '@/lib/format';
import { useActiveFindings } from '../api';
import { findingPath } from './labels';
import { SeverityBadge } from './SeverityBadge';

/** The open findings whose fixes win back the most headroom (the API's sort=impact; ties: most severe first). */
export function TopFindings({ clusterId, limit = 5 }: { clusterId: string; limit?: number }) {
  const findings = useActiveFindings(clusterId);

  if (findings.isPending) return <LoadingState label="Loading findings…" />;
  if (findings.isError) {
    return <QueryError title="Could not load findings" query={findings} />;
  }
  const ranked = findings.data.items.slice(0, limit);
  if (ranked.length === 0) {
    return (
      <EmptyState title="No open findings" headingLevel={3}>
        <p>The advisor found nothing to fix. Run it again after new data arrives.</p>
      </EmptyState>
    );
  }

  return (
    <ol className="top-findings" aria-label="Top findings by impact">
      {ranked.map((finding) => (
        <li key={finding.id} className="top-findings__item">
          <SeverityBadge severity={finding.severity} />
          <div>
            <Link to={findingPath(clusterId, finding.id)}>{finding.title}</Link>
            {finding.impact_summary && <p className="muted">Impact: {finding.impact_summary}</p>}
            {finding.headroom_before_pct != null && finding.headroom_after_pct != null && (
              <p className="muted">
                At peak: {peakUse(finding.headroom_before_pct)} now, {peakUse(finding.headroom_after_pct)} after the fix
              </p>
            )}
          </div>
        </li>
      ))}
    </ol>
  );
}
