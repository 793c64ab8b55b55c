// The Content-Security-Policy the server sends (docs/security-headers.md) against the built front end: the policy is
// on every page, and no page reports a violation, neither as a `securitypolicyviolation` event nor as a console
// message (frames without scripts, such as the weekly email's sandboxed preview, report only to the console).
// Used by the first-hour crawl, which opens every page of the demo, and by csp.spec.ts for the pages the crawl
// does not open (made-up tokens and ids, /api/docs).
import { readFileSync } from 'node:fs';
import type { BrowserContext, Page, Response } from '@playwright/test';
import { expect } from '@playwright/test';

/** Every page path of the dashboard (frontend/route-paths.json, kept true by the front end's own test). */
export const ROUTES: string[] = JSON.parse(
  readFileSync(new URL('../frontend/route-paths.json', import.meta.url), 'utf8'),
).paths;

/** The pages csp.spec.ts (and layout.spec.ts, for the layout checks) open themselves, with a made-up token or id:
 * every other route is the first-hour crawl's. */
export const ROUTES_WITH_MADE_UP_IDS = [
  '/signup/confirm',
  '/accept-invitation',
  '/unsubscribe',
  '/settings/sources/prometheus/:sourceId',
];

export interface Violation {
  page: string;
  directive: string;
  blocked: string;
  sample: string;
  source: string;
}

/** The route of ROUTES a path belongs to ("/clusters/:clusterId/findings/:findingId"); a literal segment wins. */
export function routeOf(path: string): string | undefined {
  const segments = path.split('?')[0].split('/');
  const matches = ROUTES.filter((route) => {
    const parts = route.split('/');
    return parts.length === segments.length && parts.every((p, i) => p.startsWith(':') || p === segments[i]);
  });
  // "/settings/sources/aws/new" before "/settings/sources/aws/:connectionId"
  return matches.sort((a, b) => (a.match(/:/g)?.length ?? 0) - (b.match(/:/g)?.length ?? 0))[0];
}

/** Record the violations of every page `page` opens from now on; `current` names the page for a failure. */
export async function watchViolations(context: BrowserContext, page: Page, found: Violation[], current: () => string) {
  await context.addInitScript(() => {
    const w = window as unknown as { __csp: unknown[] };
    w.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      w.__csp.push({ directive: e.effectiveDirective, blocked: e.blockedURI, sample: e.sample,
        source: `${e.sourceFile}:${e.lineNumber}` });
    }, true);
  });
  page.on('console', (message) => {
    if (/Content.Security.Policy/i.test(message.text())) {
      found.push({ page: current(), directive: 'console', blocked: '', sample: message.text(), source: message.location().url });
    }
  });
}

/** The violations the page reported since it was opened (call once the page is drawn and the network is quiet). */
export async function collectViolations(page: Page, found: Violation[], name: string) {
  const events = (await page.evaluate(() => (window as unknown as { __csp?: Omit<Violation, 'page'>[] }).__csp ?? []))
    .map((v) => ({ page: name, ...v }));
  found.push(...events);
}

/** The page was sent with the dashboard's policy. */
export function expectPolicy(response: Response | null, url: string) {
  expect.soft(response?.headers()['content-security-policy'], `${url}: no CSP header`).toContain("frame-ancestors 'none'");
}
