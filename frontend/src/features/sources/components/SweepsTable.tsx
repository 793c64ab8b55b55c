import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { ScrollRegion } from '@/components/ScrollRegion';
import { formatCount, formatTimestamp, formatUsd } from '@/lib/format';
import { useAwsSweeps } from '../api';
import { estimateMonthlyCostUsd, monthlyCostUsd, PRICE_SOURCE, sweepCostUsd } from '../pricing';

/** Recent CloudWatch sweeps with their GetMetricData calls, metrics requested and what they cost. */
export function SweepsTable({ connectionId }: { connectionId: string }) {
  const sweeps = useAwsSweeps(connectionId);
  if (sweeps.isPending) return <LoadingState label="Loading sweeps…" />;
  if (sweeps.isError) {
    return <QueryError title="Could not load sweeps" query={sweeps} />;
  }
  if (sweeps.data.length === 0) {
    return (
      <EmptyState title="No sweeps yet" headingLevel={3}>
        <p>Headroom pulls CloudWatch every minute once the connection works; each pull shows up here.</p>
      </EmptyState>
    );
  }
  const monthly = estimateMonthlyCostUsd(sweeps.data);
  return (
    <>
      <p className="sweeps__estimate">
        Estimated CloudWatch cost:{' '}
        <strong title={PRICE_SOURCE} aria-describedby="price-source">
          {monthly === null ? 'not known until a minute sweep has finished' : `${formatUsd(monthly)} / month`}
        </strong>
        <span id="price-source" className="muted">
          {' '}
          ({PRICE_SOURCE} One sweep per region per minute.)
        </span>
      </p>
      <ScrollRegion label="Collection sweeps table">
        <table className="table" aria-label="Collection sweeps">
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Kind</th>
              <th scope="col">Region</th>
              <th scope="col" title="GetMetricData calls made (NextToken pages and retries included)">
                GetMetricData calls
              </th>
              <th scope="col" title="Metrics named over all calls: CloudWatch bills these">
                Metrics requested
              </th>
              <th scope="col">Points written</th>
              <th scope="col" title={PRICE_SOURCE}>
                Cost
              </th>
              <th scope="col" title={`${PRICE_SOURCE} Incremental sweeps run every minute.`}>
                Monthly at this rate
              </th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            {sweeps.data.map((s) => (
              <tr key={s.id}>
                <td>{formatTimestamp(s.started_at)}</td>
                <td>{s.kind}</td>
                <td>{s.region ?? '—'}</td>
                <td>
                  {formatCount(s.api_calls)}
                  {s.retries > 0 && <span className="muted"> ({s.retries} retries)</span>}
                </td>
                <td>{formatCount(s.metrics_requested)}</td>
                <td>{formatCount(s.points_written)}</td>
                <td title={PRICE_SOURCE}>{formatUsd(sweepCostUsd(s.metrics_requested))}</td>
                <td title={PRICE_SOURCE}>
                  {s.kind === 'incremental' ? formatUsd(monthlyCostUsd(s.metrics_requested)) : 'one-off'}
                </td>
                <td>{s.error ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
    </>
  );
}
