/** Formatting of numbers, money and times: one formatter a concept, used by every feature. */

/** Units every Headroom number carries. Free text is allowed for rarer ones (e.g. "ms"). */
export type Unit = 'IOPS' | 'MiB/s' | '%' | 'GiB' | 'MiB' | (string & {});

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/**
 * The unit a person reads for a unit the API or CloudWatch spells, and the factor from one to the other. One
 * unit per quantity everywhere: shares and ratios as %, sizes in GiB and rates in MiB/s (1 MiB = 1,048,576 bytes,
 * the unit of the EBS throughput limits), durations in ms; CloudWatch's "None" and "Count" carry no unit word; a
 * flag is yes/no. The backend scales the same way (docs/number-formats.json `stored_to_shown`, checked by both
 * sides' tests).
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
      return { unit: 'GiB', scale: 1 / GIB };
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

/** How one unit is written: decimals at >= 100, >= 10 and below 10, and the text around the number. */
export interface QuantityRule {
  digits: [number, number, number];
  suffix?: string;
  prefix?: string;
  /** Keep trailing zeros ("$3.50"); otherwise they go ("3.5 ms", "125 MiB/s"). */
  fixed?: boolean;
}

const MAGNITUDE: [number, number, number] = [0, 1, 2];

/**
 * One rule per unit for every surface. The backend (headroom.domain.units.QUANTITY_RULES) holds the same table and
 * docs/number-formats.json holds it with cases both test suites format and compare, so the app and the weekly email
 * never print one number two ways. Rounding is half away from zero, Intl.NumberFormat's default (112.5 -> "113").
 */
export const QUANTITY_RULES: Record<string, QuantityRule> = {
  IOPS: { digits: MAGNITUDE, suffix: ' IOPS' },
  'MiB/s': { digits: MAGNITUDE, suffix: ' MiB/s' },
  'MB/s': { digits: [2, 2, 2], suffix: ' MB/s' },
  GiB: { digits: MAGNITUDE, suffix: ' GiB' },
  MiB: { digits: MAGNITUDE, suffix: ' MiB' },
  '%': { digits: MAGNITUDE, suffix: '%' },
  ms: { digits: MAGNITUDE, suffix: ' ms' },
  USD: { digits: [2, 2, 2], prefix: '$', fixed: true },
  '': { digits: MAGNITUDE },
};

// Making an Intl.NumberFormat costs far more than formatting with one (a chart's first render formats hundreds of
// values: its ticks, legend ranges and image description), so each (digits, fixed) pair is made once.
const quantityFormats = new Map<string, Intl.NumberFormat>();

function quantityFormat(digits: number, fixed: boolean): Intl.NumberFormat {
  const key = `${digits}:${fixed}`;
  let format = quantityFormats.get(key);
  if (!format) {
    format = new Intl.NumberFormat('en-US', {
      maximumFractionDigits: digits,
      minimumFractionDigits: fixed ? digits : 0,
      roundingMode: 'halfExpand',
    });
    quantityFormats.set(key, format);
  }
  return format;
}

/** Write `value` (already in `unit`) by the unit's rule: "3,000 IOPS", "113 MiB/s", "42.5%", "$1,234.50". */
export function formatQuantity(value: number, unit: string): string {
  const rule = QUANTITY_RULES[unit] ?? { digits: MAGNITUDE, suffix: unit ? ` ${unit}` : '' };
  const abs = Math.abs(value);
  const digits = abs >= 100 ? rule.digits[0] : abs >= 10 ? rule.digits[1] : rule.digits[2];
  // Never "-0": zero, and float noise just below zero that rounds to nothing at these digits, read 0.
  const clean = abs < 0.5 * 10 ** -digits ? 0 : value;
  const number = quantityFormat(digits, rule.fixed === true).format(Math.abs(clean));
  return `${clean < 0 ? '-' : ''}${rule.prefix ?? ''}${number}${rule.suffix ?? ''}`;
}

/** Format `value` with its unit: "3,000 IOPS", "125 MiB/s", "42.5%"; a 0.76 "fraction" reads "76%", a "bool" yes/no. */
export function formatValue(value: number, unit: Unit): string {
  const human = humanUnit(unit);
  if (human.flag) return value ? 'yes' : 'no';
  return formatQuantity(value * human.scale, human.unit);
}

/**
 * A throughput limit AWS publishes in MB/s (decimal, Mbps / 8), shown in the one unit Headroom uses for
 * throughput, MiB/s, with AWS's own figure beside it: "298 MiB/s (AWS: 312.5 MB/s)".
 */
export function formatAwsThroughput(mbPerSecond: number): string {
  const mib = (mbPerSecond * 1e6) / MIB;
  return `${formatQuantity(mib, 'MiB/s')} (AWS: ${formatQuantity(mbPerSecond, 'MB/s')})`;
}

const count = new Intl.NumberFormat('en-US');

/** A whole count with thousands separators: "12,345". */
export function formatCount(n: number): string {
  return count.format(n);
}

/** US dollars: "$1,234.50"; sub-cent amounts keep two significant digits ("$0.0042") rather than "$0.00". */
export function formatUsd(amount: number): string {
  if (amount > 0 && amount < 0.01) return `$${amount.toPrecision(2)}`;
  return formatQuantity(amount, 'USD');
}

/** A change in US dollars, signed: "+$12.00", "−$10.00" (a minus sign, not a hyphen), "$0.00". */
export function formatUsdChange(delta: number): string {
  if (delta === 0) return formatUsd(0);
  return `${delta > 0 ? '+' : '−'}${formatUsd(Math.abs(delta))}`;
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
 * uses. "85% of the limit", "144% of the limit (44% over)"; "—" without a figure. The share is rounded as every
 * % is (formatQuantity) before the part over 100 is taken, so the two figures agree.
 */
export function peakUse(headroomPct: number | null | undefined, limit = 'the limit'): string {
  if (headroomPct === null || headroomPct === undefined || !Number.isFinite(headroomPct)) return '—';
  const use = Number(formatQuantity(100 - headroomPct, '').replaceAll(',', ''));
  const pct = (n: number) => formatQuantity(n, '%');
  return use > 100 ? `${pct(use)} of ${limit} (${pct(use - 100)} over)` : `${pct(Math.max(use, 0))} of ${limit}`;
}
