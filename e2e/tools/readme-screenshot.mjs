// The README's screenshots: node e2e/tools/readme-screenshot.mjs BASE_URL EMAIL PASSWORD OUT_DIR
// (run from e2e/ after `npm ci`; Debian Chromium like the e2e tests), against a running Headroom with its demo
// fleet (`make up`; the first projections are fitted about a minute after start). Writes OUT_DIR/screenshot.png
// (the demo cluster's Overview), OUT_DIR/screenshot-fleet.png (the Clusters page: the fleet view) and
// OUT_DIR/screenshot-projections.png (the Metrics tab with "Show projections").
import { chromium } from '@playwright/test';

const [, , base, email, password, outDir] = process.argv;
const out = outDir.endsWith('/') ? outDir : `${outDir}/`;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
await page.goto(`${base}/login`);
await page.getByLabel('Email').fill(email);
await page.getByLabel('Password').fill(password);
await page.getByRole('button', { name: 'Log in' }).click();
await page.getByRole('heading', { name: 'Clusters', level: 1 }).waitFor();
await page.getByRole('row', { name: /demo-prod/ }).waitFor();
await page.waitForLoadState('networkidle');
await page.screenshot({ path: `${out}screenshot-fleet.png` });
await page.getByRole('row', { name: /demo-prod/ }).getByRole('link').first().click();
await page.waitForURL(/\/clusters\/[0-9a-f-]{36}$/);
const cluster = page.url();
await page.getByRole('list', { name: 'Top findings by impact' }).waitFor();
await page.getByRole('list', { name: 'Open findings by severity' }).waitFor();
await page.getByRole('table', { name: 'Next ceilings' }).waitFor();
await page.getByRole('table', { name: 'TiKV nodes' }).waitFor();
await page.waitForTimeout(1500);
await page.screenshot({ path: `${out}screenshot.png` });
await page.goto(`${cluster}/metrics?range=7d`);
await page.getByLabel(/Show projections/).check();
await page.getByText(/^Projection: /).first().waitFor();
await page.waitForLoadState('networkidle');
const head = await page.locator('#metrics-node-heading').boundingBox();
const second = await page.locator('.metrics__panel').nth(1).boundingBox();
await page.screenshot({
  path: `${out}screenshot-projections.png`,
  fullPage: true,
  clip: { x: 100, y: head.y - 20, width: 1080, height: second.y + second.height - head.y + 40 },
});
await browser.close();
