/** Formatting of numbers, money and times: one formatter a concept, used by every feature. */

/** Units every Headroom number carries. Free text is allowed for rarer ones (e.g. "ms"). */
export type Unit = 'IOPS' | 'MiB/s' | '%' | 'GiB' | 'MiB' | (string & {});

/** Format `value` with its unit: "3,000 IOPS", "125 MiB/s", "42.5%". */
export function formatValue(value: number, unit: Unit): string {
  const abs = Math.abs(value);
  const digits = abs >= 100 || Number.isInteger(value) ? 0 : abs >= 10 ? 1 : 2;
  const number = new Intl.NumberFormat('en-US', { maximumFractionDigits: digits }).format(value);
  return unit === '%' ? `${number}%` : `${number} ${unit}`;
}

const count = new Intl.NumberFormat('en-US');

/** A whole count with thousands separators: "12,345". */
export function formatCount(n: number): string {
  return count.format(n);
}

const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });

/** US dollars: "$1,234.50"; sub-cent amounts keep two significant digits ("$0.0042") rather than "$0.00". */
export function formatUsd(amount: number): string {
  if (amount > 0 && amount < 0.01) return `$${amount.toPrecision(2)}`;
  return usd.format(amount);
}

// Times the API gives are UTC and are shown as UTC, saying so, whatever the browser's time zone.
const dateTime = new Intl.DateTimeFormat('en-GB', {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  timeZone: 'UTC',
  timeZoneName: 'short',
});
const date = new Intl.DateTimeFormat('en-GB', { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' });

/** A moment in prose: "22 Nov 2026, 05:10 UTC". */
export function formatDateTime(iso: string): string {
  return dateTime.format(new Date(iso));
}

/** A calendar day: "22 Nov 2026" (an ISO date "2026-11-22" is read as that UTC day). */
export function formatDate(iso: string): string {
  return date.format(new Date(/^\d{4}-\d{2}-\d{2}$/.test(iso) ? `${iso}T00:00:00Z` : iso));
}

/** A moment in a settings table, sortable by eye: "2026-11-21 10:00 UTC"; "—" when there is none. */
export function formatTimestamp(iso: string | null | undefined): string {
  if (!iso) return '—';
  const parsed = new Date(iso);
  if (Number.isNaN(parsed.getTime())) return iso;
  return parsed.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

/** A duration as minutes, hours and minutes, or days and hours ("35 min", "3 h 20 min", "2 d 4 h"). */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '—';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${Math.max(minutes, 0)} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${days} d ${hours % 24} h` : `${days} d`;
}
