import { writeFileSync } from 'node:fs';
import { expect, test } from '../fixtures';
import { chartLineIn, METRICS_CHART_LINE, watchFirstChart } from '../first-chart';

// Where a cold load of the Metrics tab (or a finding) spends its time before the first chart line: the requests'
// resource timing, the main thread's long tasks and a CPU profile (Chromium's Profiler over CDP), self time summed
// by function and by script. A diagnostic, not a benchmark: HEADROOM_PROFILE_OUT names its JSON;
// HEADROOM_PROFILE_PAGE=finding profiles a finding's page instead.

const OUT = process.env.HEADROOM_PROFILE_OUT ?? '';
const RUNS = Number(process.env.HEADROOM_PROFILE_RUNS ?? '3');
const PAGE = process.env.HEADROOM_PROFILE_PAGE ?? 'metrics';

declare global {
  interface Window {
    __profileLongTasks?: { start: number; duration: number }[];
  }
}

/** Before the app's scripts run: record the main thread's long tasks. */
function watchLongTasks() {
  window.__profileLongTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__profileLongTasks!.push({ start: Math.round(e.startTime), duration: Math.round(e.duration) });
  }).observe({ type: 'longtask', buffered: true });
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

test('profile: a cold load to the first chart line', async ({ page, browser, loginPage, demoLogin }) => {
  test.skip(!OUT, 'a diagnostic: HEADROOM_PROFILE_OUT names its JSON');
  test.setTimeout(600_000);
  await loginPage.goto();
  await loginPage.logIn(demoLogin.email, demoLogin.password);
  await expect(page.getByRole('heading', { name: 'Clusters', level: 1 })).toBeVisible();
  const api = async <T,>(path: string): Promise<T> => (await (await page.request.get(path)).json()) as T;
  const clusters = await api<{ items: { id: string; is_demo: boolean }[] }>('/api/v1/clusters');
  const clusterId = clusters.items.find((c) => c.is_demo)?.id ?? '';
  const findings = await api<{ items: { id: string; title: string }[] }>(`/api/v1/clusters/${clusterId}/findings`);
  const finding = findings.items.find((f) => /compaction/i.test(f.title)) ?? findings.items[0];
  const storageState = await page.context().storageState();
  const [path, selector] =
    PAGE === 'finding'
      ? [`/clusters/${clusterId}/findings/${finding?.id}`, chartLineIn('main figure')]
      : [`/clusters/${clusterId}/metrics?range=6h`, METRICS_CHART_LINE];
  const runs = [];
  for (let i = 0; i < RUNS; i += 1) {
    const context = await browser.newContext({ storageState, viewport: { width: 1280, height: 800 }, locale: 'en-GB', timezoneId: 'UTC' });
    const cold = await context.newPage();
    await cold.addInitScript(watchLongTasks);
    await cold.addInitScript(watchFirstChart, selector);
    const cdp = await context.newCDPSession(cold);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
    await cold.goto(path);
    const at = Number(await (await cold.waitForFunction(() => window.__firstChartAt ?? null, undefined, { timeout: 60_000 })).jsonValue());
    const { profile } = (await cdp.send('Profiler.stop')) as unknown as {
      profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number };
    };
    const timing = await cold.evaluate(() => ({
      resources: performance.getEntriesByType('resource').map((e) => {
        const r = e as PerformanceResourceTiming;
        return { name: r.name.replace(location.origin, ''), start: Math.round(r.startTime), end: Math.round(r.responseEnd), bytes: r.transferSize };
      }),
      longTasks: window.__profileLongTasks ?? [],
      nav: (() => {
        const n = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
        return { responseEnd: Math.round(n.responseEnd), domContentLoaded: Math.round(n.domContentLoadedEventEnd) };
      })(),
    }));
    // Self time per node (sum of the sample intervals landing on it), then by function and by script.
    const self = new Map<number, number>();
    profile.samples.forEach((id, k) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[k] ?? 0) / 1000));
    const byFunction = new Map<string, number>();
    const byScript = new Map<string, number>();
    for (const node of profile.nodes) {
      const ms = self.get(node.id) ?? 0;
      if (ms === 0) continue;
      const url = node.callFrame.url.replace(/^https?:\/\/[^/]+/, '');
      const fn = `${node.callFrame.functionName || '(anonymous)'} ${url}:${node.callFrame.lineNumber}:${node.callFrame.columnNumber}`;
      byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
      byScript.set(url || node.callFrame.functionName, (byScript.get(url || node.callFrame.functionName) ?? 0) + ms);
    }
    // Who forces layouts: the callers of getBoundingClientRect and of the layout reads, by self time below them.
    const parent = new Map<number, ProfileNode>();
    for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node);
    const forcedBy = new Map<string, number>();
    for (const node of profile.nodes) {
      const ms = self.get(node.id) ?? 0;
      if (ms === 0 || !/^(getBoundingClientRect|offsetWidth|offsetHeight|scrollWidth|clientWidth|getComputedStyle|getBBox|getComputedTextLength)$/.test(node.callFrame.functionName)) continue;
      const caller = parent.get(node.id)?.callFrame;
      const grand = parent.get(parent.get(node.id)?.id ?? -1)?.callFrame;
      const where = (f?: ProfileNode['callFrame']) => (f ? `${f.functionName || '(anonymous)'} ${f.url.replace(/^https?:\/\/[^/]+/, '')}:${f.lineNumber}:${f.columnNumber}` : '?');
      const key = `${node.callFrame.functionName} <- ${where(caller)} <- ${where(grand)}`;
      forcedBy.set(key, (forcedBy.get(key) ?? 0) + ms);
    }
    const top = (m: Map<string, number>, n: number) =>
      [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => ({ what: k, ms: Math.round(v) }));
    runs.push({ first_chart_ms: Math.round(at), ...timing, by_script: top(byScript, 15), by_function: top(byFunction, 40), forced_layout_by: top(forcedBy, 15) });
    await context.close();
  }
  writeFileSync(OUT, `${JSON.stringify({ page: PAGE, runs }, null, 2)}\n`);
});
