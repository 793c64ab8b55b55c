import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { SourceText } from '@/components/SourceText';
import { formatAwsThroughput, formatValue, humanUnit } from './format';

describe('human units (no "None" axis, no "1 ratio", "0.76 fraction" or "1 bool")', () => {
  it.each([
    [0.76, 'fraction', '76%'],
    [0.0625, 'ratio', '6.25%'],
    [1, 'ratio', '100%'],
    [1, 'bool', 'yes'],
    [0, 'bool', 'no'],
    [3, 'None', '3'],
    [12, 'Count', '12'],
    [0.69, 'r', '0.69'],
    [42.5, 'Percent', '42.5%'],
    // 0.005 s = 5 ms; 222,706.65 µs = 222.7 ms (one unit per duration: ms)
    [0.005, 'seconds', '5 ms'],
    [222706.65, 'microseconds', '223 ms'],
    // 10 GiB/s = 10,737,418,240 bytes/s = 10,240 MiB/s
    [10737418240, 'bytes/s', '10,240 MiB/s'],
    [3000, 'IOPS', '3,000 IOPS'],
    [125, 'MiB/s', '125 MiB/s'],
  ])('%s %s reads "%s"', (value, unit, shown) => {
    expect(formatValue(value, unit)).toBe(shown);
  });

  it('never shows the raw CloudWatch or registry spelling as a unit', () => {
    for (const raw of ['None', 'ratio', 'fraction', 'bool', 'Count', 'r']) {
      expect(['', '%']).toContain(humanUnit(raw).unit);
    }
  });
});

describe('one throughput unit: MiB/s, with the MB/s AWS publishes beside it', () => {
  it('m6i.2xlarge: 2,500 Mbps / 8 = 312.5 MB/s = 312.5e6 / 1,048,576 = 298.0 MiB/s', () => {
    expect(formatAwsThroughput(312.5)).toBe('298 MiB/s (AWS: 312.5 MB/s)');
  });
  it('m5.2xlarge burst: 4,750 Mbps / 8 = 593.75 MB/s = 566.2 MiB/s', () => {
    expect(formatAwsThroughput(593.75)).toBe('566 MiB/s (AWS: 593.75 MB/s)');
  });
});

describe('sources link to their documents', () => {
  it('makes the https link of a source clickable and keeps the title', () => {
    render(
      <p>
        <SourceText text="AWS: Amazon EBS volume types (https://docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html)" />
      </p>,
    );
    const link = screen.getByRole('link');
    expect(link).toHaveAttribute('href', 'https://docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html');
    expect(screen.getByText(/AWS: Amazon EBS volume types/)).toBeInTheDocument();
  });
});
