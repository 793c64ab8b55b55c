// Take the README screenshot: node e2e/tools/readme-screenshot.mjs BASE_URL EMAIL PASSWORD OUT.png
// (run from e2e/ after `npm ci`; uses Debian Chromium like the e2e tests). Logs in, opens the first cluster (the
// demo cluster for demo@example.com) and shoots its overview once the findings and nodes have loaded.
import { chromium } from '@playwright/test';
const [,, base, email, password, out] = process.argv;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox','--disable-gpu','--disable-background-networking','--disable-component-update','--disable-sync','--no-first-run','--disable-quic'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
await page.goto(base + '/login');
await page.getByLabel('Email').fill(email);
await page.getByLabel('Password').fill(password);
await page.getByRole('button', { name: /log in/i }).click();
await page.waitForURL('**/clusters');
await page.getByRole('table').getByRole('rowheader').getByRole('link').first().click();
await page.getByRole('list', { name: 'Top findings by impact' }).waitFor();
await page.getByRole('table', { name: 'TiKV nodes' }).waitFor();
await page.waitForTimeout(1500);
await page.screenshot({ path: out });
await browser.close();
