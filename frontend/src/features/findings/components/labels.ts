import { formatDateTime } from '@/lib/format';
import type { FindingStatus, Severity } from '../api';

export const SEVERITY_LABEL: Record<Severity, string> = { critical: 'Critical', warning: 'Warning', info: 'Info' };
export const STATUS_LABEL: Record<FindingStatus, string> = {
  open: 'Open',
  acknowledged: 'Acknowledged',
  snoozed: 'Snoozed',
  resolved: 'Resolved',
};

export function findingPath(clusterId: string, findingId: string): string {
  return `/clusters/${clusterId}/findings/${findingId}`;
}

/** One entry of a finding's history in words: what happened, with its details, and who did it. */
export function historyText(entry: { action: string; actor_user_id: string | null; details: Record<string, unknown> }): string {
  const d = entry.details;
  const text = (key: string) => (typeof d[key] === 'string' ? (d[key] as string) : '');
  const who = entry.actor_user_id === null ? ' by the advisor' : ' by a member';
  switch (entry.action) {
    case 'finding.opened':
      return `Opened${text('severity') ? ` (${text('severity')})` : ''}${who}`;
    case 'finding.reopened':
      return `Reopened${text('severity') ? ` (${text('severity')})` : ''}${who}`;
    case 'finding.escalated':
      return `Severity rose from ${text('from')} to ${text('to')}${who}`;
    case 'finding.acknowledged':
      return `Acknowledged${who}`;
    case 'finding.snoozed':
      return `Snoozed${text('until') ? ` until ${formatDateTime(text('until'))}` : ''}${who}`;
    case 'finding.unsnoozed':
      return `Snooze ended: open again${who}`;
    case 'finding.resolved':
      return `Resolved${text('reason') ? `: ${text('reason')}` : ''}${who}`;
    default:
      return `${entry.action.replace('finding.', '')}${who}`;
  }
}
