import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { preloadTimeSeriesChart, TimeSeriesChart } from '.';

const T0 = Date.UTC(2026, 10, 1, 0, 0);

describe('TimeSeriesChart (the lazily loaded export)', () => {
  it('holds the chart box with its title while Recharts loads, then draws the chart', async () => {
    render(
      <TimeSeriesChart
        title="Volume IOPS"
        unit="IOPS"
        width={600}
        height={200}
        animate={false}
        series={[{ id: 'read', label: 'Read IOPS', points: [{ t: T0, value: 1200 }, { t: T0 + 60_000, value: 1800 }] }]}
      />,
    );
    expect(screen.getByText('Loading the chart “Volume IOPS”…')).toBeInTheDocument();
    const figure = await screen.findByRole('figure', { name: 'Volume IOPS' });
    expect(within(figure).getByRole('list', { name: 'Volume IOPS: legend' })).toHaveTextContent('Read IOPS');
    expect(screen.queryByText('Loading the chart “Volume IOPS”…')).not.toBeInTheDocument();
  });

  it('draws a chart at once, with no loading box, once the chart code is in', async () => {
    preloadTimeSeriesChart();
    // the first test (or the preload) has loaded the chunk: wait for it, then a new chart needs no fallback
    render(<TimeSeriesChart title="Warm-up" unit="IOPS" width={600} height={200} animate={false} series={[]} />);
    await screen.findByRole('figure', { name: 'Warm-up' });
    render(
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
    expect(screen.queryByText('Loading the chart “Write IOPS”…')).not.toBeInTheDocument();
  });
});
