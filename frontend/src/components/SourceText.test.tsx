import { render, screen } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { describe, expect, it } from 'vitest';
import { SourceText } from './SourceText';

function show(text: string) {
  return render(
    <MemoryRouter>
      <p data-testid="source">
        <SourceText text={text} />
      </p>
    </MemoryRouter>,
  );
}

describe('SourceText', () => {
  it('links a "How Headroom decides" page named by its title to the page in the app', () => {
    show("Headroom's threshold: 10 % saving (How Headroom decides: Cost: gp2 -> gp3 and over-provisioned volumes)");
    const link = screen.getByRole('link', { name: 'How Headroom decides: Cost: gp2 -> gp3 and over-provisioned volumes' });
    expect(link).toHaveAttribute('href', '/decides/cost');
    expect(link).not.toHaveAttribute('target');
    expect(screen.getByTestId('source')).toHaveTextContent(
      "Headroom's threshold: 10 % saving (How Headroom decides: Cost: gp2 -> gp3 and over-provisioned volumes)",
    );
  });

  it('names a repository path of a threshold page by the page title, never by the path', () => {
    show("Headroom's threshold (docs/thresholds/burst.md#forecast)");
    const link = screen.getByRole('link', { name: 'How Headroom decides: Burst buckets: when a forecast is a finding' });
    expect(link).toHaveAttribute('href', '/decides/burst#forecast');
    expect(screen.getByTestId('source')).not.toHaveTextContent('docs/');
    expect(screen.getByTestId('source')).not.toHaveTextContent('.md');
  });

  it('keeps public sources as links that open apart, next to a page link', () => {
    show(
      'AWS: Amazon EBS volume types (https://docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html); ' +
        'How Headroom decides: Block size',
    );
    const links = screen.getAllByRole('link');
    expect(links.map((l) => l.getAttribute('href'))).toEqual([
      'https://docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html',
      '/decides/block-size',
    ]);
    expect(links[0]).toHaveAttribute('target', '_blank');
    expect(links[0]).toHaveAttribute('rel', 'noreferrer noopener');
  });

  it('leaves text that names no page as text', () => {
    show('How Headroom decides: a page that does not exist');
    expect(screen.queryByRole('link')).toBeNull();
    expect(screen.getByTestId('source')).toHaveTextContent('How Headroom decides: a page that does not exist');
  });
});
