import { readFileSync } from 'node:fs';
import { collectViolations, expectPolicy, ROUTES_WITH_MADE_UP_IDS, routeOf, type Violation, watchViolations } from '../csp';
import { expect, test } from '../fixtures';

// The Content-Security-Policy the server sends (docs/security-headers.md) is one the built front end satisfies.
// The first-hour crawl (first-hour.spec.ts) opens every page of the demo and of a visitor and checks each for the
// policy and its violations (../csp.ts); this spec opens the pages it leaves out: links with a made-up token (the
// server's refusal shown) and a source that does not exist (the page's error). /api/docs has its own policy; its
// inline script must be allowed by the hash the server sent.

const NO_SUCH_ID = '00000000-0000-4000-8000-000000000000';

test('the pages the first-hour crawl does not open, and /api/docs, report no Content-Security-Policy violation', async ({
  page, context, signInAsDemo,
}, testInfo) => {
  const found: Violation[] = [];
  let current = '';
  await watchViolations(context, page, found, () => current);
  const visited = new Set<string>();
  const visit = async (url: string, ready: () => Promise<void>) => {
    current = url;
    expectPolicy(await page.goto(url), url);
    await ready();
    await page.waitForLoadState('networkidle');
    await collectViolations(page, found, url);
    visited.add(routeOf(url) ?? url);
  };
  // A page is drawn when the app has put something in #root (a page with an unknown id or token shows its error there).
  const drawn = () => expect(page.locator('#root')).not.toBeEmpty();

  // Pages for visitors, before logging in, from links with a made-up token.
  await visit('/signup/confirm?token=not-a-token', drawn);
  await visit('/accept-invitation?token=not-a-token', drawn);
  await visit('/unsubscribe?token=not-a-token', drawn);
  // Logged in: a Prometheus source that does not exist.
  await signInAsDemo();
  await visit(`/settings/sources/prometheus/${NO_SUCH_ID}`, drawn);
  expect([...visited].sort()).toEqual([...ROUTES_WITH_MADE_UP_IDS].sort());

  // /api/docs: Swagger UI, whose page names its CDN. The test machines cannot reach the CDN: its files are served
  // from the swagger-ui-dist package (the same major version the page asks for), so Swagger UI really runs under
  // the page's own policy (the CDN allowed, its inline start script by hash). The favicon is refused: no CSP matter.
  const swaggerDist = new URL('../node_modules/swagger-ui-dist/', import.meta.url);
  await context.route(/^https:\/\/cdn\.jsdelivr\.net\/npm\/swagger-ui-dist@5\/([\w.-]+)$/, (route) => {
    const file = new URL(route.request().url()).pathname.split('/').pop() ?? '';
    const type = file.endsWith('.css') ? 'text/css' : 'text/javascript';
    return route.fulfill({ body: readFileSync(new URL(file, swaggerDist)), contentType: type });
  });
  await context.route(/^https:\/\/fastapi\.tiangolo\.com\//, (route) => route.abort());
  current = '/api/docs';
  const docs = await page.goto('/api/docs');
  expect(docs?.headers()['content-security-policy']).toMatch(/script-src 'self' https:\/\/cdn\.jsdelivr\.net 'sha256-/);
  // Swagger UI drew the API from /api/v1/openapi.json: its title and an operation
  await expect(page.getByRole('heading', { name: /Headroom API/ })).toBeVisible({ timeout: 20_000 });
  await expect(page.getByText('/api/v1/clusters', { exact: true }).first()).toBeVisible();
  await page.waitForLoadState('networkidle');
  await collectViolations(page, found, '/api/docs');

  await testInfo.attach('csp-violations.json', { body: JSON.stringify(found, null, 2), contentType: 'application/json' });
  expect(found, 'CSP violations').toEqual([]);
});

test('the dashboard refuses to be framed by another site', async ({ page }) => {
  // A page of another origin (about:blank with content of its own) frames the login page: Chromium must refuse it.
  const target = new URL('/login', test.info().project.use.baseURL).toString();
  const blocked: string[] = [];
  page.on('console', (m) => { if (/frame-ancestors|refused to (display|frame)/i.test(m.text())) blocked.push(m.text()); });
  await page.setContent(`<iframe id="victim" src="${target}" width="800" height="600"></iframe>`);
  await expect.poll(() => blocked.length, { timeout: 15_000 }).toBeGreaterThan(0);
  const frame = page.frames().find((f) => f !== page.mainFrame());
  expect(await frame?.evaluate(() => document.body?.innerText ?? '').catch(() => '')).not.toContain('Log in');
});
