import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { DEFAULT_FILTERS, NO_FILTERS, useFindings, type FindingFilters } from '../api';
import { FindingsFilters } from './FindingsFilters';
import { FindingsTable } from './FindingsTable';

interface Props {
  clusterId: string;
  filters: FindingFilters;
  onFiltersChange: (filters: FindingFilters) => void;
}

/** The cluster's findings, filtered, with loading, empty and error states. */
export function FindingsPanel({ clusterId, filters, onFiltersChange }: Props) {
  const findings = useFindings(clusterId, filters);
  // The rules to filter by are those the cluster has at all, whatever is filtered now.
  const all = useFindings(clusterId, NO_FILTERS);
  const rules = [...new Set((all.data?.items ?? []).map((f) => f.rule))].sort();
  const filtered = filters.status.length + filters.severity.length + filters.rule.length > 0;
  const byDefault =
    filters.severity.length + filters.rule.length === 0 &&
    filters.status.length === DEFAULT_FILTERS.status.length &&
    DEFAULT_FILTERS.status.every((s) => filters.status.includes(s));
  const hidden = (all.data?.items ?? []).filter((f) => !DEFAULT_FILTERS.status.includes(f.status)).length;

  let body;
  if (findings.isPending) body = <LoadingState label="Loading findings…" />;
  else if (findings.isError) {
    body = (
      <QueryError title="Could not load findings" query={findings} />
    );
  } else if (findings.data.items.length === 0) {
    body = all.data?.items.length === 0 ? (
      <EmptyState title="No findings yet">
        {/* Every 15 minutes: the advice.run schedule in backend/headroom/findings/jobs.py. */}
        <p>The advisor has not found anything on this cluster. It runs every 15 minutes, or on demand.</p>
      </EmptyState>
    ) : byDefault ? (
      <EmptyState
        title="No open findings"
        action={
          hidden > 0 ? (
            <button type="button" className="button button--secondary" onClick={() => onFiltersChange(NO_FILTERS)}>
              Show {hidden} snoozed or resolved
            </button>
          ) : undefined
        }
      >
        {/* Every 15 minutes: the advice.run schedule in backend/headroom/findings/jobs.py. */}
        <p>Nothing on this cluster needs attention now. The advisor runs every 15 minutes, or on demand.</p>
      </EmptyState>
    ) : filtered ? (
      <EmptyState
        title="No findings match these filters"
        action={
          <button type="button" className="button button--secondary" onClick={() => onFiltersChange(NO_FILTERS)}>
            Clear filters
          </button>
        }
      >
        <p>Widen the state, severity or rule filters to see more.</p>
      </EmptyState>
    ) : (
      <EmptyState title="No findings yet">
        <p>The advisor has not found anything on this cluster. It runs every 15 minutes, or on demand.</p>
      </EmptyState>
    );
  } else {
    body = (
      <>
        <p className="muted" role="status">
          {findings.data.total} finding{findings.data.total === 1 ? '' : 's'}
          {byDefault && hidden > 0 ? ` open; ${hidden} snoozed or resolved not shown (tick them under State)` : ''}
        </p>
        <FindingsTable clusterId={clusterId} findings={findings.data.items} />
      </>
    );
  }

  return (
    <div className="findings-panel">
      <FindingsFilters filters={filters} rules={rules} onChange={onFiltersChange} />
      <div>{body}</div>
    </div>
  );
}
