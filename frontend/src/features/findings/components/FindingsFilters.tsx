import { SEVERITIES, STATUSES, type FindingFilters, type FindingStatus, type Severity } from '../api';
import { SEVERITY_LABEL, STATUS_LABEL } from './labels';

interface Props {
  filters: FindingFilters;
  rules: string[];
  onChange: (filters: FindingFilters) => void;
}

function toggle<T>(list: T[], value: T, on: boolean): T[] {
  return on ? [...list.filter((v) => v !== value), value] : list.filter((v) => v !== value);
}

/** Filter findings by status, severity and rule (each a set; empty means all). */
export function FindingsFilters({ filters, rules, onChange }: Props) {
  return (
    <form className="filters" aria-label="Filter findings" onSubmit={(e) => e.preventDefault()}>
      <fieldset>
        <legend>State</legend>
        {STATUSES.map((status: FindingStatus) => (
          <label key={status} className="check">
            <input
              type="checkbox"
              checked={filters.status.includes(status)}
              onChange={(e) => onChange({ ...filters, status: toggle(filters.status, status, e.target.checked) })}
            />
            {STATUS_LABEL[status]}
          </label>
        ))}
      </fieldset>
      <fieldset>
        <legend>Severity</legend>
        {SEVERITIES.map((severity: Severity) => (
          <label key={severity} className="check">
            <input
              type="checkbox"
              checked={filters.severity.includes(severity)}
              onChange={(e) =>
                onChange({ ...filters, severity: toggle(filters.severity, severity, e.target.checked) })
              }
            />
            {SEVERITY_LABEL[severity]}
          </label>
        ))}
      </fieldset>
      <div className="field">
        <label htmlFor="finding-rule-filter">Rule</label>
        <select
          id="finding-rule-filter"
          value={filters.rule[0] ?? ''}
          onChange={(e) => onChange({ ...filters, rule: e.target.value ? [e.target.value] : [] })}
        >
          <option value="">All rules</option>
          {rules.map((rule) => (
            <option key={rule} value={rule}>
              {rule}
            </option>
          ))}
        </select>
      </div>
    </form>
  );
}
