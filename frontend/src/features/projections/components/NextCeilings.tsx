import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { SourceText } from '@/components/SourceText';
import { formatTimestamp, formatValue } from '@/lib/format';
import { methodWords } from '@/lib/forecast-method';
import { daysText, projectionTitle, useProjections } from '../api';

/** The nearest projected ceilings of a cluster: what runs out, when (with the 90 % interval), and from what. */
export function NextCeilings({ clusterId, limit = 6 }: { clusterId: string; limit?: number }) {
  const query = useProjections(clusterId);
  if (query.isPending) return <LoadingState label="Loading projections…" />;
  if (query.isError) return <QueryError title="Could not load projections" query={query} />;
  const { items, fitted_at: fittedAt } = query.data;
  if (items.length === 0) {
    return (
      <EmptyState title="No projections yet" headingLevel={3}>
        Projections are fitted once a day from the cluster's hourly history (at least 6 hours of data).
      </EmptyState>
    );
  }
  const shown = items.slice(0, limit);
  return (
    <>
      <div className="table-scroll" tabIndex={0} role="region" aria-label="Next ceilings table">
        <table className="table" aria-label="Next ceilings">
          <thead>
            <tr>
              <th scope="col">What</th>
              <th scope="col">Now</th>
              <th scope="col">Ceiling</th>
              <th scope="col">Reached</th>
              <th scope="col">Growth</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((p) => (
              <tr key={p.id}>
                <th scope="row">{projectionTitle(p)}</th>
                <td>{formatValue(p.level_now, p.unit)}</td>
                <td>
                  {formatValue(p.ceiling, p.unit)}
                  <div className="muted small">
                    <SourceText text={p.ceiling_source} />
                  </div>
                </td>
                <td>
                  <strong>{daysText(p)}</strong>
                  <div className="muted small">
                    {methodWords(p.method)}, {Math.round(p.history_hours / 24)} days of history
                  </div>
                </td>
                <td>
                  {p.growth_percent_per_week === null
                    ? '—'
                    : `${p.growth_percent_per_week >= 0 ? '+' : ''}${formatValue(p.growth_percent_per_week, 'value')} % a week`}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p className="muted small">
        {Math.round((shown[0]?.interval ?? 0.9) * 100)} % intervals; fitted {formatTimestamp(fittedAt)}.{' '}
        {items.length > shown.length && `${items.length - shown.length} more ceilings are further away.`}
      </p>
    </>
  );
}
