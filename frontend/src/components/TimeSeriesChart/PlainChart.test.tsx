import { act, render } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { linePath, PlainTimeSeriesChart, plotScale } from './PlainChart';
import { TimeSeriesChart, type Ceiling, type ForecastBand, type TimeSeries } from './TimeSeriesChart';
import { segmentCount, type Point } from './series';

const T0 = Date.UTC(2026, 10, 1, 0, 0);
const MIN = 60_000;

/** The points of a path's "M x,y" / "L x,y" commands, each with whether it starts a new piece. */
function commands(d: string): { move: boolean; x: number; y: number }[] {
  return [...d.matchAll(/([ML])([-\d.e]+),([-\d.e]+)/g)].map((m) => ({ move: m[1] === 'M', x: Number(m[2]), y: Number(m[3]) }));
}

// A minute series with a null sample at +2 min and no sample at all from +4 to +7 min (a 3-step hole).
const read: TimeSeries = {
  id: 'read',
  label: 'Read IOPS',
  stepMs: MIN,
  points: [
    { t: T0, value: 1200 },
    { t: T0 + MIN, value: 1800 },
    { t: T0 + 2 * MIN, value: null },
    { t: T0 + 3 * MIN, value: 2400 },
    { t: T0 + 4 * MIN, value: 2000 },
    { t: T0 + 7 * MIN, value: 900 },
    { t: T0 + 8 * MIN, value: 1000 },
  ],
};
const write: TimeSeries = { id: 'write', label: 'Write IOPS', stepMs: MIN, points: [{ t: T0, value: 300 }, { t: T0 + 8 * MIN, value: 350 }] };
// gp3 baseline: 3,000 IOPS included with every gp3 volume (AWS EBS volume types documentation).
const gp3: Ceiling = { id: 'gp3-iops', label: 'gp3 provisioned IOPS', value: 3000, source: 'AWS EBS volume types (gp3 baseline)' };
const forecast: ForecastBand = {
  label: 'Forecast (80% interval)',
  points: [
    { t: T0 + 8 * MIN, lower: 900, upper: 1100 },
    { t: T0 + 10 * MIN, lower: 800, upper: 1400 },
  ],
};
const DOMAIN: [number, number] = [T0, T0 + 10 * MIN];

function props(extra: Partial<Parameters<typeof TimeSeriesChart>[0]> = {}) {
  return {
    title: 'Volume IOPS',
    unit: 'IOPS' as const,
    series: [read, write],
    ceilings: [gp3],
    forecast,
    width: 640,
    height: 280,
    animate: false,
    xDomain: DOMAIN,
    ...extra,
  };
}

describe('linePath', () => {
  const scale = plotScale(DOMAIN, 4000, 640, 280);

  it('draws every point of the data, in order, at its scaled place', () => {
    const points: Point[] = [
      { t: T0, value: 0 },
      { t: T0 + 5 * MIN, value: 2000 },
      { t: T0 + 10 * MIN, value: 4000 },
    ];
    const drawn = commands(linePath(points, scale));
    // the plot runs from x 84 to 624 (640 less the 8 + 16 px margins and the 76 px y axis), y 246 (0) to 20 (4,000)
    expect(drawn).toEqual([
      { move: true, x: 84, y: 246 },
      { move: false, x: 354, y: 133 },
      { move: false, x: 624, y: 20 },
    ]);
  });

  it('breaks the line at a gap and never joins across it', () => {
    const points: Point[] = [
      { t: T0, value: 1000 },
      { t: T0 + MIN, value: 1100 },
      { t: T0 + 2 * MIN, value: null },
      { t: T0 + 6 * MIN, value: 1200 },
      { t: T0 + 7 * MIN, value: 1300 },
    ];
    const drawn = commands(linePath(points, scale));
    expect(drawn.filter((c) => c.move)).toHaveLength(segmentCount(points));
    expect(drawn.map((c) => c.move)).toEqual([true, false, true, false]);
    // the piece after the gap starts at its own first point, not at the last point before it
    expect(drawn[2]!.x).toBeCloseTo(scale.x(T0 + 6 * MIN));
  });

  it('draws nothing for a series without values (no placeholder line)', () => {
    expect(linePath([{ t: T0, value: null }], scale)).toBe('');
    expect(linePath([], scale)).toBe('');
  });
});

describe('PlainTimeSeriesChart', () => {
  it('draws the same lines, ticks, limit and band as the Recharts chart, in the same box', () => {
    const plain = render(<PlainTimeSeriesChart {...props()} />).container;
    const full = render(<TimeSeriesChart {...props()} />).container;

    // each series' line: the same path (to a hundredth of a pixel: d3's scale rounds its floats its own way), a
    // gap breaking it in both (read has three pieces: the null, the hole)
    const drawn = (d: string | null | undefined) =>
      commands(d ?? '').map((c) => ({ move: c.move, x: Math.round(c.x * 100) / 100, y: Math.round(c.y * 100) / 100 }));
    for (const id of ['read', 'write']) {
      const p = drawn(plain.querySelector(`.ts-chart__line--${id} path`)?.getAttribute('d'));
      const r = drawn(full.querySelector(`.ts-chart__line--${id} path.recharts-line-curve`)?.getAttribute('d'));
      expect(p.length).toBeGreaterThan(1);
      expect(p).toEqual(r);
    }
    expect(commands(plain.querySelector('.ts-chart__line--read path')!.getAttribute('d')!).filter((c) => c.move)).toHaveLength(3);

    // the axes' labels, as Recharts writes them
    const texts = (root: Element, selector: string) => [...root.querySelectorAll(selector)].map((t) => t.textContent);
    expect(texts(plain, '.ts-chart__axis--value text')).toHaveLength(5);
    expect(texts(plain, '.ts-chart__axis--value text')).toEqual(texts(full, '.recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value'));
    expect(texts(plain, '.ts-chart__axis--time text').length).toBeGreaterThan(1);
    expect(texts(plain, '.ts-chart__axis--time text').slice(0, -1)).toEqual(
      texts(full, '.recharts-xAxis-tick-labels .recharts-cartesian-axis-tick-value'),
    );

    // the limit's line at the same height, its label in the same place
    const ceilingY = plain.querySelector('.ts-chart__ceiling line')!.getAttribute('y1');
    expect(Number(ceilingY)).toBeCloseTo(Number(full.querySelector('.recharts-reference-line line')!.getAttribute('y1')));
    const label = (root: Element) => root.querySelector('.ts-chart__ceiling-label');
    expect(label(plain)?.textContent).toBe(label(full)?.textContent);
    expect(label(plain)?.getAttribute('y')).toBe(label(full)?.getAttribute('y'));

    // the band's upper edge follows the forecast (Recharts' area: the same top points)
    expect(plain.querySelector('.ts-chart__plain-band')?.getAttribute('d')).toMatch(/^M.*Z$/);

    // the same figure: caption, image description, legend
    const words = (root: Element) => [root.querySelector('[role="img"]')?.getAttribute('aria-label'), root.querySelector('ul')?.textContent];
    expect(words(plain)).toEqual(words(full));
  });

  it('shows the empty message, and no plot, without data', () => {
    const { container, getByText } = render(
      <PlainTimeSeriesChart {...props({ series: [{ id: 'x', label: 'X', points: [] }], ceilings: [], forecast: undefined })} emptyMessage="No data for this window." />,
    );
    expect(getByText('No data for this window.')).toBeInTheDocument();
    expect(container.querySelector('svg')).toBeNull();
  });
});

describe('a plot drawn when scrolled near view (drawWhenNearView)', () => {
  // The browser's IntersectionObserver, stood in for (jsdom has none): records what it observes, reports on demand.
  class FakeIntersectionObserver {
    static last: FakeIntersectionObserver | undefined;
    observed: Element[] = [];
    constructor(private readonly report: IntersectionObserverCallback) {
      FakeIntersectionObserver.last = this;
    }
    observe(element: Element) {
      this.observed.push(element);
    }
    disconnect() {
      this.observed = [];
    }
    enter() {
      const entries = this.observed.map((target) => ({ target, isIntersecting: true }) as IntersectionObserverEntry);
      this.report(entries, this as unknown as IntersectionObserver);
    }
  }

  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it('draws a plot in view at once, and one below the fold when it comes near, in a box of its full height', () => {
    vi.stubGlobal('IntersectionObserver', FakeIntersectionObserver);
    // in view: drawn in the first render's layout, before any observer reports
    const inView = render(<PlainTimeSeriesChart {...props({ drawWhenNearView: true })} />).container;
    expect(inView.querySelector('path.ts-chart__plain-line')).not.toBeNull();
    inView.remove();

    // far below the fold (3,000 px down a 768 px window)
    vi.spyOn(HTMLElement.prototype, 'getBoundingClientRect').mockReturnValue({ top: 3000, bottom: 3280 } as DOMRect);
    const below = render(<PlainTimeSeriesChart {...props({ drawWhenNearView: true })} />).container;
    expect(below.querySelector('svg')).toBeNull();
    expect(below.querySelector('[role="img"]')).toHaveStyle({ height: '280px' });
    expect(below.querySelector('.ts-chart__legend')).toHaveTextContent('Read IOPS');
    act(() => FakeIntersectionObserver.last!.enter());
    expect(below.querySelector('path.ts-chart__plain-line')).not.toBeNull();
  });
});
