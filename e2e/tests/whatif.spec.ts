import { expect, test } from '../fixtures';

// A phone's width (iPhone 12-15: 390 CSS px): the what-if page must fit it without scrolling sideways.
const PHONE = { width: 390, height: 844 };

test.use({ viewport: PHONE });

test('what-if on a phone: move the gp2 volume to gp3 and see the cost, ceilings and findings follow', async ({
  page,
  clusterPage,
  openDemoCluster,
}, testInfo) => {
  // A fresh server needs its first minutes to simulate the demo fleet and run the advisor on it.
  test.setTimeout(240_000);
  await openDemoCluster();

  await clusterPage.openTab('What-if');
  await expect(page).toHaveURL(/\/what-if$/);
  await page.getByRole('button', { name: 'Add a volume change' }).click();
  const row = page.getByRole('group', { name: '1. Volume' });
  const volume = row.getByLabel('Volume');
  const gp2 = await volume.locator('option', { hasText: 'gp2' }).first().getAttribute('value');
  await volume.selectOption(gp2 ?? '');
  await row.getByLabel('Type').selectOption('gp3');

  // no button: the answer follows the form
  const cost = page.getByRole('region', { name: 'Monthly cost' });
  await expect(cost).toContainText(/Change\s*−\$/); // gp3 is cheaper per GiB than gp2 (AWS EBS pricing)
  await expect(page.getByRole('list', { name: 'Ceilings that move' })).toContainText(`${gp2}`);
  await expect(page.getByRole('region', { name: /^Resolved \([1-9]/ })).toBeVisible();

  const shot = testInfo.outputPath('whatif-phone.png');
  await page.screenshot({ path: shot, fullPage: true });
  await testInfo.attach('whatif-phone', { path: shot, contentType: 'image/png' });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
});
