const tickFormat = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 2 });

/** A compact tick label with its unit: "12K IOPS", "1.5M", "40%", "0.5 ms" (unit as the chart shows it). */
export function formatTick(value: number, unit = ''): string {
  // never "-0": a tick at -0 or float noise just below zero reads 0
  const number = tickFormat.format(Math.abs(value) < 0.005 ? 0 : value);
  if (unit === '%') return `${number}%`;
  return unit ? `${number} ${unit}` : number;
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
