import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { DEFAULT_FILTERS, NO_FILTERS, useFindings, type FindingFilters, type FindingSummary } from '../api';
import { FindingsFilters } from './FindingsFilters';
import { FindingsTable } from './FindingsTable';

interface Props {
  clusterId: string;
  filters: FindingFilters;
  onFiltersChange: (filters: FindingFilters) => void;
}

function matches(filters: FindingFilters, f: FindingSummary): boolean {
  return (
    (filters.status.length === 0 || filters.status.includes(f.status)) &&
    (filters.severity.length === 0 || filters.severity.includes(f.severity)) &&
    (filters.rule.length === 0 || filters.rule.includes(f.rule))
  );
}

/**
 * The cluster's findings, filtered, with loading, empty and error states. One request: the whole list (a cluster
 * has tens of findings), filtered here, so the rules to filter by, the count of hidden ones and the list agree.
 */
export function FindingsPanel({ clusterId, filters, onFiltersChange }: Props) {
  const all = useFindings(clusterId, NO_FILTERS);
  const items = (all.data?.items ?? []).filter((f) => matches(filters, f));
  const rules = [...new Set((all.data?.items ?? []).map((f) => f.rule))].sort();
  const filtered = filters.status.length + filters.severity.length + filters.rule.length > 0;
  const byDefault =
    filters.severity.length + filters.rule.length === 0 &&
    filters.status.length === DEFAULT_FILTERS.status.length &&
    DEFAULT_FILTERS.status.every((s) => filters.status.includes(s));
  const hidden = (all.data?.items ?? []).filter((f) => !DEFAULT_FILTERS.status.includes(f.status)).length;

  let body;
  if (all.isPending) body = <LoadingState label="Loading findings…" />;
  else if (all.isError) {
    body = (
      <QueryError title="Could not load findings" query={all} />
    );
  } else if (items.length === 0) {
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
          {items.length} finding{items.length === 1 ? '' : 's'}
          {byDefault && hidden > 0 ? ` open; ${hidden} snoozed or resolved not shown (tick them under State)` : ''}
        </p>
        <FindingsTable clusterId={clusterId} findings={items} />
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
