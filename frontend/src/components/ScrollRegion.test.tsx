import { render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { ScrollRegion } from './ScrollRegion';

// jsdom lays nothing out (every size is 0): the box's sizes are given here as a browser would measure them.
function layOut(sizes: { scrollWidth: number; clientWidth: number }) {
  for (const [name, value] of Object.entries(sizes)) {
    Object.defineProperty(HTMLElement.prototype, name, { configurable: true, get: () => value });
  }
}

afterEach(() => {
  delete (HTMLElement.prototype as { scrollWidth?: number }).scrollWidth;
  delete (HTMLElement.prototype as { clientWidth?: number }).clientWidth;
});

function renderTable() {
  return render(
    <ScrollRegion label="Findings table">
      <table>
        <caption>Findings</caption>
        <tbody>
          <tr>
            <td>a row</td>
          </tr>
        </tbody>
      </table>
    </ScrollRegion>,
  );
}

describe('ScrollRegion', () => {
  it('is a named, focusable region while its table is wider than the box (keyboard users can scroll it)', () => {
    layOut({ scrollWidth: 1276, clientWidth: 986 });
    renderTable();
    const region = screen.getByRole('region', { name: 'Findings table' });
    expect(region).toHaveAttribute('tabindex', '0');
    expect(region).toContainElement(screen.getByRole('table', { name: 'Findings' }));
  });

  it('is a plain box, no tab stop and no landmark, while the table fits', () => {
    layOut({ scrollWidth: 900, clientWidth: 986 });
    const { container } = renderTable();
    expect(screen.queryByRole('region')).toBeNull();
    expect(container.firstElementChild).not.toHaveAttribute('tabindex');
    expect(container.firstElementChild).toHaveClass('table-wrap');
  });
});
