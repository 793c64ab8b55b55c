import type { PatchFormat } from '../api';

export const FORMAT_LABEL: Record<PatchFormat, string> = {
  toml: 'tikv.toml fragment',
  merged: 'merged tikv.toml',
  diff: 'unified diff',
  tiup: 'TiUP edit-config',
  operator: 'TiDB Operator YAML',
  sql: 'SQL (SET CONFIG)',
  'tikv-ctl': 'tikv-ctl commands',
  aws: 'AWS CLI',
  terraform: 'Terraform',
  rollback: 'rollback',
};

const dateTime = new Intl.DateTimeFormat('en-GB', {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  timeZone: 'UTC',
  timeZoneName: 'short',
});

export function formatDateTime(iso: string): string {
  return dateTime.format(new Date(iso));
}
