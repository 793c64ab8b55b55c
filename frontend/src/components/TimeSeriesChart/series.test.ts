import { describe, expect, it } from 'vitest';
import { drawnLine, findGaps, segmentCount, timeTicks, valueAt, valueRange, type Point } from './series';

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 1, 0, 0);
const at = (minutes: number[], value = (m: number) => m as number | null): Point[] =>
  minutes.map((m) => ({ t: T0 + m * MIN, value: value(m) }));

describe('findGaps', () => {
  it('finds none in points one step apart', () => {
    expect(findGaps(at([0, 1, 2, 3]), MIN)).toEqual([]);
  });

  it('finds a missing step (two steps apart is longer than 1.5 steps)', () => {
    expect(findGaps(at([0, 1, 3, 4]), MIN)).toEqual([{ from: T0 + MIN, to: T0 + 3 * MIN }]);
  });

  it('tolerates points off one grid by up to half a step (M4 keeps bucket starts inside uneven spans)', () => {
    // a 12-minute span: kept points up to a span apart, 17 minutes apart is still under 1.5 spans
    expect(findGaps(at([0, 11, 12, 29]), 12 * MIN)).toEqual([]);
    expect(findGaps(at([0, 12, 31]), 12 * MIN)).toEqual([{ from: T0 + 12 * MIN, to: T0 + 31 * MIN }]);
  });

  it('counts a run of nulls as one gap, and without a step only nulls make gaps', () => {
    const points = at([0, 1, 2, 3, 4, 30], (m) => (m === 2 || m === 3 ? null : m));
    expect(findGaps(points, MIN)).toEqual([
      { from: T0 + MIN, to: T0 + 4 * MIN },
      { from: T0 + 4 * MIN, to: T0 + 30 * MIN },
    ]);
    expect(findGaps(points)).toEqual([{ from: T0 + MIN, to: T0 + 4 * MIN }]);
  });

  it('never reads a null as 0: a gap, and no 0 in what is drawn', () => {
    const line = drawnLine(at([0, 1, 2], (m) => (m === 1 ? null : 5)), MIN);
    expect(line.points.map((p) => p.value)).toEqual([5, null, 5]);
    expect(valueRange(line.points)).toEqual([5, 5]);
  });
});

describe('drawnLine', () => {
  it("keeps a series' own points: one piece however another series is sampled", () => {
    const line = drawnLine(at([0, 2, 4, 6]), 2 * MIN);
    expect(line.points).toEqual(at([0, 2, 4, 6]));
    expect(segmentCount(line.points)).toBe(1);
  });

  it('breaks the line at each gap and only there', () => {
    const line = drawnLine(at([0, 1, 2, 10, 11, 20]), MIN);
    expect(segmentCount(line.points)).toBe(3);
    expect(line.gaps).toHaveLength(2);
  });

  it('sorts the points it is given', () => {
    expect(drawnLine(at([2, 0, 1]), MIN).points.map((p) => p.t)).toEqual([T0, T0 + MIN, T0 + 2 * MIN]);
  });

  it('cuts to the domain, ending a crossing segment at the edge with its interpolated value', () => {
    // a forecast from minute 10 (value 10) to minute 110 (value 110), on an axis to minute 20
    const line = drawnLine(at([10, 110]), undefined, [T0, T0 + 20 * MIN]);
    expect(line.points).toEqual([
      { t: T0 + 10 * MIN, value: 10 },
      { t: T0 + 20 * MIN, value: 20 },
    ]);
    expect(line.continuesPastEnd).toBe(true);
    // and before the domain's start
    const early = drawnLine(at([-10, 10]), undefined, [T0, T0 + 20 * MIN]);
    expect(early.points).toEqual([
      { t: T0, value: 0 },
      { t: T0 + 10 * MIN, value: 10 },
    ]);
    expect(early.continuesPastEnd).toBe(false);
  });

  it('keeps only the gaps inside the domain', () => {
    const line = drawnLine(at([-30, -29, 2, 3, 7, 8, 30, 31]), MIN, [T0, T0 + 10 * MIN]);
    // the gap across the start, the one inside; not the one after the end (8 -> 30 starts before it: kept)
    expect(line.gaps).toEqual([
      { from: T0 - 29 * MIN, to: T0 + 2 * MIN },
      { from: T0 + 3 * MIN, to: T0 + 7 * MIN },
      { from: T0 + 8 * MIN, to: T0 + 30 * MIN },
    ]);
    expect(segmentCount(line.points)).toBe(2);
  });
});

describe('valueAt (the tooltip)', () => {
  const line = drawnLine(at([0, 1, 2, 10, 11]), MIN);
  it("reads the series' nearest point, 'no data' in its gap, nothing outside its range", () => {
    expect(valueAt(line, T0 + 1.4 * MIN)).toBe(1);
    expect(valueAt(line, T0 + 1.6 * MIN)).toBe(2);
    expect(valueAt(line, T0 + 5 * MIN)).toBe('no data');
    expect(valueAt(line, T0 + 12 * MIN)).toBeUndefined();
  });
});

describe('timeTicks', () => {
  it('puts ticks on round UTC hours inside the domain, none at the right edge', () => {
    const start = Date.UTC(2026, 10, 1, 5, 17);
    const ticks = timeTicks([start, start + 24 * 3_600_000]);
    expect(ticks.map((t) => new Date(t).toISOString().slice(11, 16))).toEqual(['06:00', '12:00', '18:00', '00:00']);
    // 6 hours and a 3-hour horizon: 3-hour steps, at most four labels (each ~80 px wide)
    const six = timeTicks([start, start + 9 * 3_600_000]);
    expect(six.map((t) => new Date(t).toISOString().slice(11, 16))).toEqual(['06:00', '09:00', '12:00']);
    // 7 days and a 3.5-day horizon: every 3 days
    expect(timeTicks([start, start + 10.5 * 24 * 3_600_000])).toHaveLength(3);
  });
});
