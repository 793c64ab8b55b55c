import { expect, test } from '../fixtures';

// Under `prefers-reduced-motion: reduce` (which every spec runs with, playwright.config.ts) a page that is loading
// shows a spinner that stands still, with its words in a status region; without the preference it turns.
// A request that never answers keeps the page loading for as long as the test looks at it.

test('the loading spinner stands still under reduced motion and turns without it', async ({ page, signInAsDemo }) => {
  await signInAsDemo();
  await page.route(/\/api\/v1\/org\/audit-log/, () => {
    /* never answered: the page stays in its loading state */
  });
  await page.goto('/settings/audit-log');
  const status = page.getByRole('status').filter({ hasText: 'Loading the audit log…' });
  await expect(status).toBeVisible();
  const spinner = status.locator('.spinner');
  const animation = () => spinner.evaluate((el) => getComputedStyle(el).animationName);

  expect(await page.evaluate(() => matchMedia('(prefers-reduced-motion: reduce)').matches)).toBe(true);
  expect(await animation()).toBe('none');
  // Still a busy indicator: drawn, not hidden.
  await expect(spinner).toBeVisible();

  await page.emulateMedia({ reducedMotion: 'no-preference' });
  expect(await animation()).toBe('spin');
});
