import { expect, test } from '../fixtures';


test('the weekly email renders in Chromium and every link in it opens a page of the running app', async ({
  page,
  baseURL,
  openDemoCluster,
}, testInfo) => {
  // A fresh server needs its first minutes to simulate the demo fleet and run the advisor on it.
  test.setTimeout(240_000);
  await openDemoCluster();

  // this week's email as the weekly job would build it (the settings page's preview)
  const preview = await page.request.get('/api/v1/org/digest/preview');
  expect(preview.ok()).toBeTruthy();
  const email = (await preview.json()) as { subject: string; html: string; text: string };
  expect(email.subject).toContain('Headroom weekly advisory');

  const mail = await page.context().newPage();
  await mail.setContent(email.html, { waitUntil: 'load' });
  await expect(mail.getByRole('heading', { level: 1 })).toContainText('Headroom weekly advisory');
  // the top findings' charts (related parts in the sent message; inline in the preview) are drawn, with words
  const charts = mail.locator('img');
  expect(await charts.count()).toBeGreaterThan(0);
  for (const chart of await charts.all()) {
    expect(await chart.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBeGreaterThan(500);
    expect(await chart.getAttribute('alt')).toMatch(/ over the .* UTC: /);
  }
  const shot = testInfo.outputPath('weekly-email.png');
  await mail.screenshot({ path: shot, fullPage: true });
  await testInfo.attach('weekly-email', { path: shot, contentType: 'image/png' });

  const hrefs = await mail.locator('a[href]').evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
  expect(hrefs.length).toBeGreaterThan(0);
  for (const href of new Set(hrefs)) {
    // HEADROOM_PUBLIC_URL is this server, port included; each link is a page of it (the app serves its pages)
    expect(href.startsWith(`${baseURL}/`), href).toBeTruthy();
    const opened = await mail.goto(href);
    expect(opened?.status(), href).toBe(200);
    await expect(mail.getByRole('heading', { name: 'Page not found' })).toHaveCount(0);
  }
  await mail.close();
});
