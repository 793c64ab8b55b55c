import type { Severity } from '../api';
import { SEVERITY_LABEL } from './labels';

export function SeverityBadge({ severity }: { severity: Severity }) {
  return <span className={`severity severity--${severity}`}>{SEVERITY_LABEL[severity]}</span>;
}
