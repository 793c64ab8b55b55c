// The chart's pure layout: series colours, the y axis's top and where ceiling labels go. No Recharts here (this
// module loads with the page; the chart module itself is fetched lazily), and nothing per point.

/**
 * Okabe & Ito's colour-blind-safe palette (Okabe, M. and Ito, K., "Color Universal Design", 2008; the qualitative
 * palette Wong recommends in Nature Methods 8, 441, 2011), in an order that puts the most distinct hues first.
 * Black comes late, and yellow last: it is the least visible on white.
 */
export const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#000000', '#F0E442'];

/** Dash pattern of the second pass through the palette, and of a series drawn as another's continuation. */
export const DASHED = '6 3';

export interface SeriesStyleInput {
  id: string;
  color?: string;
  /** Id of the series this one continues (a forecast of it): drawn in that series' colour, dashed. */
  follows?: string;
}

export interface SeriesStyle {
  color: string;
  dash?: string;
}

/**
 * A distinct look for every series of one chart: palette colours by index among the series without a colour of
 * their own, a dashed second pass past the palette's eight, and a continuation in its series' colour, dashed.
 */
export function seriesStyles(series: SeriesStyleInput[]): SeriesStyle[] {
  const styles: (SeriesStyle | undefined)[] = [];
  const byId = new Map<string, SeriesStyle>();
  let next = 0;
  series.forEach((s, i) => {
    if (s.follows !== undefined && series.some((o) => o.id === s.follows && o.follows === undefined)) return;
    let style: SeriesStyle;
    if (s.color !== undefined) style = { color: s.color };
    else {
      const lap = Math.floor(next / PALETTE.length);
      style = { color: PALETTE[next % PALETTE.length]!, ...(lap > 0 ? { dash: DASHED } : {}) };
      next += 1;
    }
    styles[i] = style;
    byId.set(s.id, style);
  });
  return series.map((s, i) => {
    const own = styles[i];
    if (own) return own;
    return { color: s.color ?? byId.get(s.follows!)!.color, dash: DASHED };
  });
}

/** A round axis top at or above `max`, so the quarter ticks are round too: 3,300 -> 4,000; 0.7 -> 0.8. */
export function niceAxisMax(max: number): number {
  if (!Number.isFinite(max) || max <= 0) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(max));
  const step = [1, 2, 4, 8, 10].find((s) => s * magnitude >= max - 1e-9 * magnitude) ?? 10;
  return step * magnitude;
}

/** Leave room above the highest value, ceiling or forecast so a line never sits on the frame. */
export const Y_HEADROOM = 1.08;

/**
 * The y axis's top for the highest value drawn: a round number above it; a percentage of a whole (a burst
 * balance, a hit ratio) stops at 100 % when nothing drawn is above it (a 0-100 % axis, never 0-200 %).
 */
export function axisMax(highest: number, percent: boolean): number {
  const top = niceAxisMax(highest * Y_HEADROOM);
  return percent && highest <= 100 ? Math.min(top, 100) : top;
}

/** Where a ceiling's inline label goes: above its line, below it, or only in the legend (no room near the line). */
export type LabelPlacement = 'above' | 'below' | 'legend';

// Text metrics of the 12 px labels: the baseline sits 5 px above a line, or 14 px below it (under the line);
// two labels closer than LABEL_HEIGHT between baselines overlap (they are right-aligned at the same x).
const LABEL_HEIGHT = 13;
const ABOVE = -5;
const BELOW = 14;

/**
 * Place the inline labels of the ceilings (horizontal lines at `value` on an axis from 0 to `yMax`, drawn
 * `plotHeight` px tall) so no two overlap: each label goes above its line, else below it when no other line runs
 * through it there, else it stays in the legend (which lists every ceiling with its value and source).
 */
export function layoutCeilingLabels(
  ceilings: { id: string; value: number }[],
  yMax: number,
  plotHeight: number,
): Map<string, LabelPlacement> {
  const y = (v: number) => plotHeight * (1 - Math.min(Math.max(v, 0), yMax) / yMax);
  // top to bottom on screen
  const sorted = [...ceilings].sort((a, b) => b.value - a.value);
  const lines = sorted.map((c) => y(c.value));
  const placements = new Map<string, LabelPlacement>();
  let previous = -Infinity; // the baseline of the label placed last (pixels from the plot's top)
  sorted.forEach((c, i) => {
    const line = lines[i]!;
    const above = line + ABOVE;
    const below = line + BELOW;
    const crossesBelow = lines.some((other, j) => j !== i && other > line + 1 && other < below + 2);
    if (above >= previous + LABEL_HEIGHT) {
      placements.set(c.id, 'above');
      previous = above;
    } else if (below >= previous + LABEL_HEIGHT && below <= plotHeight && !crossesBelow) {
      placements.set(c.id, 'below');
      previous = below;
    } else {
      placements.set(c.id, 'legend');
    }
  });
  return placements;
}
