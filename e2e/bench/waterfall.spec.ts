import { writeFileSync } from 'node:fs';
import { expect, test } from '../fixtures';
import { METRICS_CHART_LINE } from '../first-chart';

// The waterfall of a cold load (a new browser context: no HTTP cache, no React Query cache) of a few pages: when
// each request started, when its first byte and its last byte came (resource timing), the document's own timing,
// the main thread's long tasks and when the page's content was in. A diagnostic, not a benchmark:
// HEADROOM_WATERFALL_OUT names its JSON, HEADROOM_WATERFALL_RUNS the cold loads per page (3 by default); each
// load's table is printed.

const OUT = process.env.HEADROOM_WATERFALL_OUT ?? '';
const RUNS = Number(process.env.HEADROOM_WATERFALL_RUNS ?? '3');

const PROFILE = process.env.HEADROOM_WATERFALL_PROFILE === '1';
// HEADROOM_WATERFALL_PAGES: the pages to load, by name, comma-separated (all by default).
const ONLY = process.env.HEADROOM_WATERFALL_PAGES ?? '';

interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

/** With HEADROOM_WATERFALL_PROFILE=1: the main thread's self time by function (Chromium's sampling profiler over
 * CDP) from the navigation to the content, the top 25 (the profiler itself slows the load down). */
function selfTimeByFunction(profile: Profile) {
  const self = new Map<number, number>();
  profile.samples.forEach((id, k) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[k] ?? 0) / 1000));
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const ms = self.get(node.id) ?? 0;
    const f = node.callFrame;
    const what = `${f.functionName || '(anonymous)'} ${f.url.replace(/^https?:\/\/[^/]+/, '')}:${f.lineNumber}:${f.columnNumber}`;
    if (ms > 0 && f.functionName !== '(idle)') byFunction.set(what, (byFunction.get(what) ?? 0) + ms);
  }
  return [...byFunction.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([what, ms]) => ({ what, ms: Math.round(ms) }));
}

declare global {
  interface Window {
    __contentAt?: number;
    __waterfallLongTasks?: { start: number; duration: number }[];
  }
}

/** Before the app's scripts run: record long tasks, and when `selector` is in with no spinner left. */
function watch(selector: string) {
  window.__waterfallLongTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__waterfallLongTasks!.push({ start: Math.round(e.startTime), duration: Math.round(e.duration) });
  }).observe({ type: 'longtask', buffered: true });
  const observer = new MutationObserver(() => {
    if (window.__contentAt === undefined && document.querySelector(selector) && !document.querySelector('.spinner')) {
      window.__contentAt = performance.now();
      observer.disconnect();
    }
  });
  const start = () => observer.observe(document.documentElement, { subtree: true, childList: true, attributes: true });
  if (document.documentElement) start();
  else document.addEventListener('DOMContentLoaded', start);
}

test('waterfall: cold loads of a few pages', async ({ page, browser, loginPage, demoLogin }) => {
  test.skip(!OUT, 'a diagnostic: HEADROOM_WATERFALL_OUT names its JSON');
  test.setTimeout(600_000);
  await loginPage.goto();
  await loginPage.logIn(demoLogin.email, demoLogin.password);
  await expect(page.getByRole('heading', { name: 'Clusters', level: 1 })).toBeVisible();
  const clusters = (await (await page.request.get('/api/v1/clusters')).json()) as { items: { id: string; is_demo: boolean }[] };
  const clusterId = clusters.items.find((c) => c.is_demo)?.id ?? '';
  const storageState = await page.context().storageState();
  const pages = [
    { name: 'settings: API tokens', path: '/settings/tokens', content: 'main h1' },
    { name: 'clusters', path: '/clusters', content: 'main table' },
    { name: 'cluster overview', path: `/clusters/${clusterId}`, content: 'main table' },
    { name: 'metrics (6 h)', path: `/clusters/${clusterId}/metrics?range=6h`, content: METRICS_CHART_LINE },
  ].filter((p) => !ONLY || ONLY.split(',').includes(p.name));
  const out = [];
  for (const p of pages) {
    for (let i = 0; i < RUNS; i += 1) {
      const context = await browser.newContext({ storageState, viewport: { width: 1280, height: 800 }, locale: 'en-GB', timezoneId: 'UTC' });
      const cold = await context.newPage();
      await cold.addInitScript(watch, p.content);
      const cdp = PROFILE ? await context.newCDPSession(cold) : undefined;
      if (cdp) {
        await cdp.send('Profiler.enable');
        await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
        await cdp.send('Profiler.start');
      }
      await cold.goto(p.path);
      const contentAt = Number(await (await cold.waitForFunction(() => window.__contentAt ?? null, undefined, { timeout: 60_000 })).jsonValue());
      const profile = cdp ? selfTimeByFunction(((await cdp.send('Profiler.stop')) as unknown as { profile: Profile }).profile) : undefined;
      const timing = await cold.evaluate(() => {
        const n = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
        const serverTiming = (r: PerformanceResourceTiming) => r.serverTiming.map((s) => `${s.name}=${Math.round(s.duration)}`).join(' ');
        return {
          document: { start: 0, firstByte: Math.round(n.responseStart), end: Math.round(n.responseEnd), bytes: n.transferSize,
            domInteractive: Math.round(n.domInteractive), domContentLoaded: Math.round(n.domContentLoadedEventEnd), server: serverTiming(n) },
          resources: performance.getEntriesByType('resource').map((e) => {
            const r = e as PerformanceResourceTiming;
            return { name: r.name.replace(location.origin, ''), start: Math.round(r.startTime), firstByte: Math.round(r.responseStart),
              end: Math.round(r.responseEnd), bytes: r.transferSize, server: serverTiming(r) };
          }),
          longTasks: window.__waterfallLongTasks ?? [],
        };
      });
      await context.close();
      const rows = [`${p.name} (cold load ${i + 1}): content at ${Math.round(contentAt)} ms`,
        `  document            0 -> ttfb ${timing.document.firstByte} -> ${timing.document.end} ms; interactive ${timing.document.domInteractive}, DCL ${timing.document.domContentLoaded}`,
        ...timing.resources.map((r) => `  ${r.name.slice(0, 60).padEnd(60)} ${String(r.start).padStart(5)} -> ttfb ${String(r.firstByte).padStart(5)} -> ${String(r.end).padStart(5)} ms ${String(r.bytes).padStart(7)} B ${r.server}`),
        `  long tasks: ${timing.longTasks.map((t) => `${t.start}+${t.duration}`).join(', ') || 'none'}`,
        ...(profile ?? []).map((f) => `  self ${String(f.ms).padStart(5)} ms  ${f.what}`)];
      console.log(rows.join('\n'));
      out.push({ page: p.name, run: i + 1, content_ms: Math.round(contentAt), ...timing, profile });
    }
  }
  writeFileSync(OUT, `${JSON.stringify(out, null, 2)}\n`);
});
