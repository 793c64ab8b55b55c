// What each line of a chart draws, per series: its own points (never merged with another series' timestamps),
// broken only where that series has no data, and cut to the chart's time domain. Pure and small: this module loads
// with the page (the chart itself, with Recharts, is fetched lazily), and tests run it without a DOM.

export interface Point {
  /** Milliseconds since the epoch. */
  t: number;
  /** null: no sample (a gap), never 0. */
  value: number | null;
}

/** A stretch of time without data in one series, [from, to] in epoch ms (the last point before, the first after). */
export interface Gap {
  from: number;
  to: number;
}

/**
 * Two points further apart than this many of the series' steps have a gap between them. A point stands for its
 * step (a 1-minute bucket, a 5-minute CloudWatch period, an M4 span of the server's downsampling), so two neighbours
 * are one step apart; the half step of slack absorbs timestamps that are not on one grid (an M4 span's kept points
 * are bucket starts, the spans are not). One missing step (2 steps apart) is a gap.
 */
export const GAP_STEPS = 1.5;

/** The gaps of a series: runs of null values and distances longer than GAP_STEPS of `stepMs` (points sorted by t). */
export function findGaps(points: readonly Point[], stepMs?: number): Gap[] {
  const gaps: Gap[] = [];
  let last: number | undefined; // time of the last point with a value
  let open = false; // a null was met since `last`
  for (const p of points) {
    if (p.value === null || !Number.isFinite(p.value)) {
      open = true;
      continue;
    }
    if (last !== undefined && (open || (stepMs !== undefined && p.t - last > GAP_STEPS * stepMs))) {
      gaps.push({ from: last, to: p.t });
    }
    last = p.t;
    open = false;
  }
  return gaps;
}

/** The value of a straight line from a to b at time t. */
function between(a: Point & { value: number }, b: Point & { value: number }, t: number): number {
  if (b.t === a.t) return b.value;
  return a.value + ((b.value - a.value) * (t - a.t)) / (b.t - a.t);
}

export interface DrawnLine {
  /** The points to draw, sorted, with a null where the line breaks (a gap), cut to the domain. */
  points: Point[];
  /** The gaps inside the domain. */
  gaps: Gap[];
  /** The series goes on past the domain's end (a forecast running beyond the chart's horizon). */
  continuesPastEnd: boolean;
}

/**
 * One line as drawn: the series' own points, a null inserted in every gap so the line breaks there and only
 * there, cut to `domain` (a segment crossing an edge ends at the edge, at its interpolated value).
 */
export function drawnLine(points: readonly Point[], stepMs?: number, domain?: readonly [number, number]): DrawnLine {
  const sorted = [...points].sort((a, b) => a.t - b.t);
  const gaps = findGaps(sorted, stepMs);
  const breaks = new Set(gaps.map((g) => g.to));
  // valued points, each flagged when a gap ends at it (the line breaks before it)
  const valued = sorted.filter((p): p is Point & { value: number } => p.value !== null && Number.isFinite(p.value));
  const [lo, hi] = domain ?? [-Infinity, Infinity];
  const out: Point[] = [];
  valued.forEach((p, i) => {
    const prev = valued[i - 1];
    const broken = breaks.has(p.t) && prev !== undefined;
    if (broken && p.t > lo && prev.t < hi) out.push({ t: Math.max(prev.t, lo) + 1, value: null });
    if (!broken && prev !== undefined) {
      // the segment prev -> p crosses an edge of the domain: end it there
      if (prev.t < lo && p.t > lo) out.push({ t: lo, value: between(prev, p, lo) });
      if (prev.t < hi && p.t > hi) out.push({ t: hi, value: between(prev, p, hi) });
    }
    if (p.t >= lo && p.t <= hi) out.push(p);
  });
  const last = valued[valued.length - 1];
  return {
    points: out,
    gaps: gaps.filter((g) => g.to > lo && g.from < hi),
    continuesPastEnd: last !== undefined && last.t > hi,
  };
}

/** How many separate pieces a drawn line has (what an SVG path's "M" commands count). */
export function segmentCount(points: readonly Point[]): number {
  let segments = 0;
  let inside = false;
  for (const p of points) {
    const has = p.value !== null;
    if (has && !inside) segments += 1;
    inside = has;
  }
  return segments;
}

/**
 * The value a series shows at time t (a tooltip's time): its nearest point, "no data" inside one of its gaps,
 * undefined outside its time range.
 */
export function valueAt(line: DrawnLine, t: number): number | 'no data' | undefined {
  const points = line.points.filter((p) => p.value !== null);
  if (points.length === 0) return undefined;
  if (t < points[0]!.t || t > points[points.length - 1]!.t) return undefined;
  if (line.gaps.some((g) => t > g.from && t < g.to)) return 'no data';
  let lo = 0;
  let hi = points.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (points[mid]!.t <= t) lo = mid;
    else hi = mid;
  }
  const a = points[lo]!;
  const b = points[hi]!;
  return (t - a.t <= b.t - t ? a : b).value ?? undefined;
}

/** The lowest and highest value a line draws (undefined without any). */
export function valueRange(points: readonly Point[]): [number, number] | undefined {
  let min = Infinity;
  let max = -Infinity;
  for (const p of points) {
    if (p.value === null) continue;
    min = Math.min(min, p.value);
    max = Math.max(max, p.value);
  }
  return min <= max ? [min, max] : undefined;
}

const HOUR = 3_600_000;
// Round steps for time ticks (UTC): hours, then days, then weeks.
const TICK_STEPS = [HOUR, 2 * HOUR, 3 * HOUR, 4 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR, 2 * 24 * HOUR, 3 * 24 * HOUR, 7 * 24 * HOUR];

/** Ticks closer than this share of the axis to its right end are left out: their label would run off the chart. */
const RIGHT_EDGE_SHARE = 0.06;

/** Ticks for a time axis: at round UTC hours / days, at most `most` of them, inside the domain. */
export function timeTicks(domain: readonly [number, number], most = 4): number[] {
  const [lo, hi] = domain;
  if (!(hi > lo)) return [lo];
  const step = TICK_STEPS.find((s) => (hi - lo) / s <= most) ?? Math.ceil((hi - lo) / most / (7 * 24 * HOUR)) * 7 * 24 * HOUR;
  const ticks: number[] = [];
  const last = hi - RIGHT_EDGE_SHARE * (hi - lo);
  for (let t = Math.ceil(lo / step) * step; t <= last; t += step) ticks.push(t);
  return ticks;
}
