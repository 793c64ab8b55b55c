/** Units every Headroom number carries. Free text is allowed for rarer ones (e.g. "ms"). */
export type Unit = 'IOPS' | 'MiB/s' | '%' | 'GiB' | 'MiB' | (string & {});

/** Format `value` with its unit: "3,000 IOPS", "125 MiB/s", "42.5%". */
export function formatValue(value: number, unit: Unit): string {
  const abs = Math.abs(value);
  const digits = abs >= 100 || Number.isInteger(value) ? 0 : abs >= 10 ? 1 : 2;
  const number = new Intl.NumberFormat('en-US', { maximumFractionDigits: digits }).format(value);
  return unit === '%' ? `${number}%` : `${number} ${unit}`;
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

/** A compact tick label: "12k", "1.5M"; the axis title carries the unit. */
export function formatTick(value: number): string {
  return new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 2 }).format(value);
}

const timeFormat = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
});

export function formatTime(epochMs: number): string {
  return timeFormat.format(new Date(epochMs));
}

/** A round axis top at or above `max`, so the quarter ticks are round too: 3,300 -> 4,000; 0.7 -> 0.8. */
export function niceAxisMax(max: number): number {
  if (!Number.isFinite(max) || max <= 0) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(max));
  const step = [1, 2, 4, 8, 10].find((s) => s * magnitude >= max - 1e-9 * magnitude) ?? 10;
  return step * magnitude;
}
