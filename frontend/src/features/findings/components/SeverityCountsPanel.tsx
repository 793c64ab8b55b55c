import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { SEVERITIES, useActiveFindings } from '../api';
import { SEVERITY_LABEL } from './labels';

/** How many open or acknowledged findings the cluster has, by severity. */
export function SeverityCountsPanel({ clusterId }: { clusterId: string }) {
  const findings = useActiveFindings(clusterId);
  if (findings.isPending) return <LoadingState label="Counting findings…" />;
  if (findings.isError) {
    return <QueryError title="Could not load findings" query={findings} />;
  }
  return (
    <ul className="severity-counts" aria-label="Open findings by severity">
      {SEVERITIES.map((severity) => (
        <li key={severity} className={`severity-count severity-count--${severity}`}>
          <span className="severity-count__number">{findings.data.counts[severity] ?? 0}</span>
          <span className="severity-count__label">{SEVERITY_LABEL[severity]}</span>
        </li>
      ))}
    </ul>
  );
}
