/** A compact tick label: "12k", "1.5M"; the axis title carries the unit. */
export function formatTick(value: number): string {
  return new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 2 }).format(value);
}

// UTC, as every time Headroom shows (CloudWatch and the advisor work in UTC): "22 Nov, 05:10".
const timeFormat = new Intl.DateTimeFormat('en-GB', {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  timeZone: 'UTC',
});

/** An axis tick: "22 Nov, 05:10" (UTC; the axis says so). */
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
