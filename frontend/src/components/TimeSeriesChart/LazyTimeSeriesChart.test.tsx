import { render, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { preloadTimeSeriesChart, TimeSeriesChart } from '.';

const T0 = Date.UTC(2026, 10, 1, 0, 0);

describe('TimeSeriesChart (the lazily loaded export)', () => {
  it('draws the data as a plain SVG line at once, then the Recharts chart in the same box once its code is in', async () => {
    // A module graph of its own: test files share one (vite.config.ts, `isolate: false`), and another file may
    // already have loaded the chart's code.
    vi.resetModules();
    const { TimeSeriesChart: ColdChart } = await import('.');
    const { container } = render(
      <ColdChart
        title="Volume IOPS"
        unit="IOPS"
        width={600}
        height={200}
        animate={false}
        series={[{ id: 'read', label: 'Read IOPS', points: [{ t: T0, value: 1200 }, { t: T0 + 60_000, value: 1800 }] }]}
      />,
    );
    // in the same render: the figure with its legend and the data's own line, no Recharts yet
    const figure = screen.getByRole('figure', { name: 'Volume IOPS' });
    expect(within(figure).getByRole('list', { name: 'Volume IOPS: legend' })).toHaveTextContent('Read IOPS');
    const plain = container.querySelector('path.ts-chart__plain-line');
    expect(plain?.getAttribute('d')).toMatch(/^M[\d.]+,[\d.]+L[\d.]+,[\d.]+$/);
    expect(container.querySelector('.recharts-line-curve')).toBeNull();
    const box = screen.getByRole('img');
    expect(box).toHaveStyle({ height: '200px' });

    await waitFor(() => expect(container.querySelector('path.recharts-line-curve')).not.toBeNull());
    expect(container.querySelector('[data-plain-chart]')).toBeNull();
    expect(screen.getByRole('img')).toHaveStyle({ height: '200px' });
    // the same line: Recharts draws the path the plain chart drew
    const points = (d: string | null | undefined) => (d ?? '').split(/[ML,]/).filter(Boolean).map((n) => Number(n).toFixed(2));
    expect(points(container.querySelector('path.recharts-line-curve')?.getAttribute('d'))).toEqual(points(plain?.getAttribute('d')));
  });

  it('draws the Recharts chart at once, with no plain first paint, once the chart code is in', async () => {
    preloadTimeSeriesChart();
    const warm = render(<TimeSeriesChart title="Warm-up" unit="IOPS" width={600} height={200} animate={false} series={[{ id: 'w', label: 'W', points: [{ t: T0, value: 1 }, { t: T0 + 60_000, value: 2 }] }]} />);
    await waitFor(() => expect(warm.container.querySelector('path.recharts-line-curve')).not.toBeNull());
    const { container } = render(
      <TimeSeriesChart
        title="Write IOPS"
        unit="IOPS"
        width={600}
        height={200}
        animate={false}
        series={[{ id: 'write', label: 'Write IOPS', points: [{ t: T0, value: 300 }, { t: T0 + 60_000, value: 500 }] }]}
      />,
    );
    // in the same render: no await
    expect(screen.getByRole('figure', { name: 'Write IOPS' })).toBeInTheDocument();
    expect(container.querySelector('[data-plain-chart]')).toBeNull();
    expect(container.querySelector('path.recharts-line-curve')).not.toBeNull();
  });
});
