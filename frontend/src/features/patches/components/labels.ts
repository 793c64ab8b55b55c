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
  configs: 'every changed node: merged tikv.toml and diff (zip)',
};
