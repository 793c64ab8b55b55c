import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { formatQuantity } from '@/lib/format';
import { useRuleAccuracy } from '../api';

/** Each advisor rule with how often its prediction held for this organisation's applied fixes. */
export function RuleAccuracyList() {
  const query = useRuleAccuracy();
  if (query.isPending) return <LoadingState label="Loading the rules" />;
  if (query.isError) return <QueryError title="Could not load the rules" query={query} />;
  const rules = query.data.items;
  if (rules.length === 0) {
    return (
      <EmptyState title="No rules to show" headingLevel={3}>
        This Headroom lists no advisor rule.
      </EmptyState>
    );
  }
  return (
    <ul className="rule-accuracy" aria-label="Rules">
      {rules.map((r) => (
        <li key={r.id}>
          <p>
            <code>{r.id}</code>
            {r.accuracy.held_share !== null && (
              <> · {formatQuantity(100 * r.accuracy.held_share, '%')} held</>
            )}
          </p>
          <p className="muted small">{r.description}</p>
          <p className="small">{r.accuracy.statement}</p>
        </li>
      ))}
    </ul>
  );
}
