import { Link } from 'react-router';
import type { FindingGroup, RelatedFinding } from '../groups';
import { findingPath, STATUS_LABEL } from './labels';
import { SeverityBadge } from './SeverityBadge';

const ROLE: Record<RelatedFinding['role'], string> = {
  primary: 'primary fix',
  fix: 'part of the primary fix',
  related: 'related',
};

/** The findings that share this one's cause: the primary fix's what-if, then each other member. */
export function RelatedFindings({
  clusterId,
  group,
  related,
  selfKey,
}: {
  clusterId: string;
  group: FindingGroup;
  related: RelatedFinding[];
  selfKey: string;
}) {
  const selfIsPrimary = group.fix.includes(selfKey);
  return (
    <section aria-labelledby="related-heading" className="card">
      <h3 id="related-heading">Related findings</h3>
      <p>
        <strong>{group.summary}</strong>
      </p>
      <p className="muted">
        Same cause: {group.cause}. {selfIsPrimary ? 'This finding is the primary fix.' : 'This finding is related.'}{' '}
        {group.measured
          ? 'Measured by applying the primary fix to the analysed data and running the rules again.'
          : 'The primary fix could not be simulated; only the findings it fixes directly are counted.'}{' '}
        <span>
          {group.resolves.includes(selfKey)
            ? 'The primary fix resolves this finding.'
            : 'This finding remains after the primary fix.'}
        </span>
      </p>
      {related.length === 0 ? (
        <p className="muted">The other findings of this group are no longer stored.</p>
      ) : (
        <ul aria-label="Findings with the same cause">
          {related.map((r) => (
            <li key={r.id}>
              <SeverityBadge severity={r.severity} /> <Link to={findingPath(clusterId, r.id)}>{r.title}</Link>{' '}
              <span className="muted">
                · {ROLE[r.role]} · {STATUS_LABEL[r.status]} ·{' '}
                {r.resolved_by_primary ? 'resolved by the primary fix' : 'remains after the primary fix'}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
