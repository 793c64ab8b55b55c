// The layout checks of a page as it is drawn (used by the first-hour crawl on every page it opens at a desktop's
// width, and by layout.spec.ts at a phone's width and on the pages the crawl does not open):
// - axe (@axe-core/playwright) finds no violation of the rules the layout budget names (REQUIRED_RULES); where every
//   default rule runs too, their violations are recorded, not failed;
// - no table cell or fact (dt/dd) holding text is squeezed to a sliver;
// - the user menu (the avatar) keeps off the main nav's links;
// - the current cluster tab is in sight in its tab strip (on a phone the strip scrolls).
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { expect } from '@playwright/test';

/** The axe rules the layout budget names; a violation of these fails the page, any other is recorded. */
export const REQUIRED_RULES = ['scrollable-region-focusable', 'label-content-name-mismatch', 'button-name', 'link-name'];

/** A cell holding text narrower than this writes a word a letter or two per line. */
const MIN_CELL_WIDTH = 40;

export interface AxeViolation {
  rule: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/** Table cells and facts (dt/dd grids) that hold text but are narrower than `min` px. */
function narrowTextCells(min: number): string[] {
  const found: string[] = [];
  for (const cell of document.querySelectorAll('main td, main th, main dt, main dd')) {
    const text = (cell.textContent ?? '').trim();
    if (text.length < 3) continue; // a dash, a tick or an icon fits a narrow column
    const box = cell.getBoundingClientRect();
    // Not rendered (a closed disclosure), or a screen reader's only (.visually-hidden: a 1 px clipped box, e.g. the
    // header row of a table drawn as cards on a phone). A squeezed column is tall: its text runs down the page.
    const dot = (el: Element) => el.getBoundingClientRect().width <= 1 && el.getBoundingClientRect().height <= 1;
    let hidden = dot(cell);
    for (let up = cell.parentElement; up && up !== document.body && !hidden; up = up.parentElement) hidden = dot(up);
    if (hidden) continue;
    if (box.width < min) found.push(`${cell.tagName.toLowerCase()} "${text.slice(0, 40)}" ${Math.round(box.width)} px wide`);
  }
  return found.slice(0, 10);
}

/** The user menu's box against each main-nav link's box: the links it overlaps. */
function avatarOverNav(): string[] {
  const menu = document.querySelector('.user-menu__button')?.getBoundingClientRect();
  if (!menu) return [];
  const found: string[] = [];
  for (const link of document.querySelectorAll('nav[aria-label="Main"] a')) {
    const box = link.getBoundingClientRect();
    const apart = box.right <= menu.left || menu.right <= box.left || box.bottom <= menu.top || menu.bottom <= box.top;
    if (!apart) found.push(`${(link.textContent ?? '').trim()} (${Math.round(box.left)}-${Math.round(box.right)} px) ` +
      `under the user menu (${Math.round(menu.left)}-${Math.round(menu.right)} px)`);
  }
  return found;
}

/** Check the page the browser shows (soft: every failure is reported); `label` names it in a failure. `rules`:
 * 'every' runs all of axe's default rules (plus label-content-name-mismatch) and returns every violation, for a
 * record of them; 'budget' runs only the rules the layout budget names (a third of the CPU on the demo's pages),
 * for a crawl that opens every page. */
export async function checkLayout(page: Page, label: string, rules: 'every' | 'budget'): Promise<AxeViolation[]> {
  // label-content-name-mismatch is one of axe's experimental rules: enabled by name. The weekly email's preview is
  // a script-less sandboxed frame (the email itself) that axe cannot enter: left out, and with it the only frame
  // of any page. Legacy mode runs axe in the page itself: the default opens a blank page per call to merge the
  // frames' results (@axe-core/playwright's README, setLegacyMode), which doubles the CPU of a check of a page
  // without frames (0.3 against 0.6 s for the budget's rules, 1.1 against 1.7 s for every rule, on the demo's pages).
  const builder = new AxeBuilder({ page }).exclude('iframe').setLegacyMode();
  if (rules === 'every') builder.options({ rules: { 'label-content-name-mismatch': { enabled: true } } });
  else builder.withRules(REQUIRED_RULES);
  const axe = await builder.analyze();
  const violations = axe.violations.map((v) => ({
    rule: v.id,
    impact: v.impact ?? null,
    help: v.help,
    targets: v.nodes.map((n) => n.target.join(' ')),
  }));
  const required = violations.filter((v) => REQUIRED_RULES.includes(v.rule));
  expect.soft(required, `${label}: axe violations`).toEqual([]);

  // A cell or a label/value pair squeezed to a sliver writes its text one letter per line.
  const slivers = await page.evaluate(narrowTextCells, MIN_CELL_WIDTH);
  expect.soft(slivers, `${label}: table cells or facts narrower than ${MIN_CELL_WIDTH} px holding text`).toEqual([]);
  // The header's user menu (the avatar) never sits on top of the main nav's links.
  const overlaps = await page.evaluate(avatarOverNav);
  expect.soft(overlaps, `${label}: the avatar overlaps the nav links`).toEqual([]);

  // On a phone the cluster tab strip scrolls: the current tab must be in sight, not beyond its edge.
  const strip = page.getByRole('navigation', { name: 'Cluster sections' });
  if ((await strip.count()) > 0) {
    const inSight = await strip.evaluate((nav) => {
      const tab = nav.querySelector('[aria-current="page"]');
      if (!tab) return true;
      const box = nav.getBoundingClientRect();
      const at = tab.getBoundingClientRect();
      return at.left >= box.left - 1 && at.right <= box.right + 1;
    });
    expect.soft(inSight, `${label}: the current cluster tab is out of sight in the tab strip`).toBe(true);
  }
  return violations;
}

/** The patch page's Changes table fits its card (it was once 1,276 px wide in a 986 px card, its reasons
 * off-screen). */
export async function expectChangesTableFits(page: Page, label: string) {
  const changes = page.getByRole('table', { name: 'Changes in this patch' });
  await expect(changes).toBeVisible();
  const fit = await changes.evaluate((table) => ({ table: table.scrollWidth, box: table.parentElement!.clientWidth }));
  expect.soft(fit.table, `${label}: the Changes table is ${fit.table} px wide in a ${fit.box} px box`)
    .toBeLessThanOrEqual(fit.box);
}
