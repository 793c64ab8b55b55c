/** Formatting of numbers, money and times: one formatter a concept, used by every feature. */

/** Units every Headroom number carries. Free text is allowed for rarer ones (e.g. "ms"). */
export type Unit = 'IOPS' | 'MiB/s' | '%' | 'GiB' | 'MiB' | (string & {});

const MIB = 1024 * 1024;

/**
 * The unit a person reads for a unit the API or CloudWatch spells, and the factor from one to the other. One
 * unit per quantity everywhere: shares and ratios as %, bytes as MiB (1 MiB = 1,048,576 bytes, the unit of the
 * EBS throughput limits), durations in ms; CloudWatch's "None" and "Count" carry no unit word; a flag is yes/no.
 */
export function humanUnit(unit: string | null | undefined): { unit: Unit; scale: number; flag?: boolean } {
  switch (unit ?? '') {
    case 'ratio':
    case 'fraction':
      return { unit: '%', scale: 100 };
    case 'Percent':
    case 'percent':
      return { unit: '%', scale: 1 };
    case 'bytes':
    case 'Bytes':
      return { unit: 'MiB', scale: 1 / MIB };
    case 'bytes/s':
    case 'Bytes/Second':
      return { unit: 'MiB/s', scale: 1 / MIB };
    case 'seconds':
    case 'Seconds':
      return { unit: 'ms', scale: 1000 };
    case 'microseconds':
    case 'Microseconds':
      return { unit: 'ms', scale: 1 / 1000 };
    case 'bool':
      return { unit: '', scale: 1, flag: true };
    case 'None':
    case 'none':
    case 'Count':
    case 'count':
    case 'r':
    case 'value':
    case '':
      return { unit: '', scale: 1 };
    default:
      return { unit: unit as Unit, scale: 1 };
  }
}

/** Format `value` with its unit: "3,000 IOPS", "125 MiB/s", "42.5%"; a 0.76 "fraction" reads "76%", a "bool" yes/no. */
export function formatValue(value: number, unit: Unit): string {
  const human = humanUnit(unit);
  if (human.flag) return value ? 'yes' : 'no';
  const shown = value * human.scale;
  const abs = Math.abs(shown);
  const digits = abs >= 100 || Number.isInteger(shown) ? 0 : abs >= 10 ? 1 : 2;
  // Never "-0": -0, and float noise just below zero that rounds to nothing at these digits, read 0.
  const clean = abs < 0.5 * 10 ** -digits ? 0 : shown;
  const number = new Intl.NumberFormat('en-US', { maximumFractionDigits: digits }).format(clean);
  if (human.unit === '%') return `${number}%`;
  return human.unit ? `${number} ${human.unit}` : number;
}

/**
 * A throughput limit AWS publishes in MB/s (decimal, Mbps / 8), shown in the one unit Headroom uses for
 * throughput, MiB/s, with AWS's own figure beside it: "298 MiB/s (AWS: 312.5 MB/s)".
 */
export function formatAwsThroughput(mbPerSecond: number): string {
  const mib = (mbPerSecond * 1e6) / MIB;
  const aws = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 }).format(mbPerSecond);
  return `${formatValue(mib, 'MiB/s')} (AWS: ${aws} MB/s)`;
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

/** A moment that may be missing, in the one format every page uses: "21 Nov 2026, 10:00 UTC"; "—" without one. */
export function formatTimestamp(iso: string | null | undefined): string {
  if (!iso) return '—';
  const parsed = new Date(iso);
  if (Number.isNaN(parsed.getTime())) return iso;
  return dateTime.format(parsed);
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

/** Days until a ceiling (null: not within the horizon) with the interval's earliest and latest days. */
export interface DaysUntil {
  days: number | null;
  days_low: number | null;
  days_high: number | null;
}

/** Days until a ceiling in words a person plans with: "reached", "in 12 days (9–16)", "not within 90 days". */
export function formatDaysUntil(d: DaysUntil, horizonDays: number): string {
  if (d.days === null) return `not within ${Math.round(horizonDays)} days`;
  if (d.days <= 0) return 'reached';
  const whole = (x: number) => Math.max(0, Math.round(x));
  const main = whole(d.days) === 0 ? 'within a day' : `in ${whole(d.days)} day${whole(d.days) === 1 ? '' : 's'}`;
  const low = d.days_low === null ? null : whole(d.days_low);
  const high = d.days_high === null ? `>${Math.round(horizonDays)}` : String(whole(d.days_high));
  return low === null ? main : `${main} (${low}–${high})`;
}

/**
 * Headroom (100 × (1 − peak / limit), the API's *_headroom_pct) as people read it: how much of its limit the peak
 * uses. "85 % of the limit", "144 % of the limit (44 % over)"; "—" without a figure.
 */
export function peakUse(headroomPct: number | null | undefined, limit = 'the limit'): string {
  if (headroomPct === null || headroomPct === undefined || !Number.isFinite(headroomPct)) return '—';
  const use = Math.round(100 - headroomPct);
  return use > 100 ? `${use} % of ${limit} (${use - 100} % over)` : `${Math.max(use, 0)} % of ${limit}`;
}
