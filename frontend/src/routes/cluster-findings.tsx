import { useSearchParams } from 'react-router';
import { DEFAULT_FILTERS, SEVERITIES, STATUSES, type FindingFilters } from '@/features/findings/api';
import { FindingsPanel } from '@/features/findings/components/FindingsPanel';
import { usePageTitle } from '@/lib/usePageTitle';
import { useClusterContext } from './cluster-layout';

/**
 * Filters live in the address (?status=open&severity=critical&rule=...), so a filtered list can be shared. With no
 * status in it the list shows what needs attention (open and acknowledged); ?status=all shows every state.
 */
function readFilters(params: URLSearchParams): FindingFilters {
  const statuses = params.getAll('status');
  return {
    status:
      statuses.length === 0
        ? DEFAULT_FILTERS.status
        : statuses.filter((s): s is FindingFilters['status'][number] => (STATUSES as string[]).includes(s)),
    severity: params.getAll('severity').filter((s): s is FindingFilters['severity'][number] =>
      (SEVERITIES as string[]).includes(s),
    ),
    rule: params.getAll('rule'),
  };
}

function writeFilters(filters: FindingFilters): URLSearchParams {
  const params = new URLSearchParams();
  const byDefault =
    filters.status.length === DEFAULT_FILTERS.status.length && DEFAULT_FILTERS.status.every((s) => filters.status.includes(s));
  if (filters.status.length === 0) params.append('status', 'all');
  else if (!byDefault) filters.status.forEach((s) => params.append('status', s));
  filters.severity.forEach((s) => params.append('severity', s));
  filters.rule.forEach((r) => params.append('rule', r));
  return params;
}

export default function ClusterFindingsPage() {
  const { cluster } = useClusterContext();
  usePageTitle(`Findings · ${cluster.name}`);
  const [params, setParams] = useSearchParams();
  return (
    <section aria-labelledby="findings-heading">
      <h2 id="findings-heading">Findings</h2>
      <FindingsPanel
        clusterId={cluster.id}
        filters={readFilters(params)}
        onFiltersChange={(filters) => setParams(writeFilters(filters), { replace: true })}
      />
    </section>
  );
}
