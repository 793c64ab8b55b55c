// Chromium's CPU while a page shows the app's loading spinner, with and without reduced motion (bench/ci_time.md,
// "Eighth pass"). A request that never answers keeps the audit log page loading.
//   HEADROOM_E2E_BASE_URL=... HEADROOM_E2E_DEMO_PASSWORD_FILE=... node tools/spinner-cpu.mjs [SECONDS]
import { readFileSync, readdirSync } from 'node:fs';
import { chromium } from '@playwright/test';

const base = process.env.HEADROOM_E2E_BASE_URL ?? 'http://127.0.0.1:8000';
const password = readFileSync(process.env.HEADROOM_E2E_DEMO_PASSWORD_FILE, 'utf8').trim();
const seconds = Number(process.argv[2] ?? 30);
const TICK = 100; // USER_HZ on Linux

/** utime + stime (s) of `root` and every process below it. */
function treeCpu(root) {
  const procs = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(name), { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / TICK });
    } catch { /* gone */ }
  }
  const inTree = new Set([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, p] of procs) if (!inTree.has(pid) && inTree.has(p.ppid)) { inTree.add(pid); grew = true; }
  }
  inTree.delete(root);
  return [...inTree].reduce((sum, pid) => sum + (procs.get(pid)?.cpu ?? 0), 0);
}

const browser = await chromium.launch({
  executablePath: process.env.HEADROOM_E2E_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run', '--disable-quic'],
});
const pid = process.pid; // the browser is this process's child; this process's own CPU is left out
const OLD_RULE = '@media (prefers-reduced-motion: reduce) { .spinner { animation: spin 2.4s linear infinite !important; } }';
const cases = [
  ['still page (loaded, nothing loading)', 'reduce', false, null],
  ['spinner, no reduced motion (0.8 s a turn)', 'no-preference', true, null],
  ['spinner, reduced motion, old rule (2.4 s a turn)', 'reduce', true, OLD_RULE],
  ['spinner, reduced motion, new rule (still)', 'reduce', true, null],
];
for (let round = 0; round < 2; round++) {
  for (const [name, motion, hang, css] of cases) {
    const context = await browser.newContext({ baseURL: base, reducedMotion: motion, bypassCSP: true, viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto('/login');
    await page.getByLabel('Email').fill('demo@example.com');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: /log in/i }).click();
    await page.getByRole('heading', { name: 'Clusters', level: 1 }).waitFor();
    if (hang) await page.route(/\/api\/v1\/org\/audit-log/, () => {});
    await page.goto('/settings/audit-log');
    if (css) await page.addStyleTag({ content: css });
    await page.getByRole('status').filter({ hasText: 'Loading the audit log' }).or(page.getByRole('table', { name: 'Audit log' })).first().waitFor();
    await page.waitForTimeout(2_000);
    const animation = await page.locator('.spinner').first().evaluate((el) => getComputedStyle(el).animationName).catch(() => '-');
    const before = treeCpu(pid);
    await page.waitForTimeout(seconds * 1000);
    const used = treeCpu(pid) - before;
    console.log(`${name}: animation ${animation}, ${used.toFixed(2)} s of CPU in ${seconds} s = ${(used * 60 / seconds).toFixed(1)} s a minute`);
    await context.close();
  }
}
await browser.close();
