import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { useFindings } from '../api';
import { SeverityBadge } from './SeverityBadge';

const ACTIVE = { status: ['open' as const, 'acknowledged' as const], severity: [], rule: [] };

interface Props {
  clusterId: string;
  selected: string[];
  onChange: (ids: string[]) => void;
}

/** Pick open findings whose changes to preview and patch. */
export function FindingSelector({ clusterId, selected, onChange }: Props) {
  const findings = useFindings(clusterId, ACTIVE);
  if (findings.isPending) return <LoadingState label="Loading findings…" />;
  if (findings.isError) {
    return <QueryError title="Could not load findings" query={findings} />;
  }
  if (findings.data.items.length === 0) {
    return (
      <EmptyState title="Nothing to patch" headingLevel={3}>
        <p>There are no open findings, so no change to preview.</p>
      </EmptyState>
    );
  }
  return (
    <fieldset className="finding-selector">
      <legend>Findings to include</legend>
      {findings.data.items.map((f) => (
        <label key={f.id} className="check check--block">
          <input
            type="checkbox"
            checked={selected.includes(f.id)}
            onChange={(e) => onChange(e.target.checked ? [...selected, f.id] : selected.filter((id) => id !== f.id))}
          />
          <SeverityBadge severity={f.severity} /> {f.title}
        </label>
      ))}
    </fieldset>
  );
}
