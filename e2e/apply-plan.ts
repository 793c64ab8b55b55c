import { expect } from './fixtures';
import type { APIRequestContext, BrowserContext, Locator, Page } from '@playwright/test';

/** What the apply specs (tests/apply.spec.ts, tests/apply-ebs.spec.ts) share: the API calls they make as the
 * signed-in user and the parts of the finding's apply panel they read. */

/** The CSRF header a write through `page.request` needs (the session's double-submit cookie). */
export async function csrfHeaders(context: BrowserContext): Promise<Record<string, string>> {
  const csrf = (await context.cookies()).find((c) => c.name === 'headroom_csrf')?.value ?? '';
  return { 'X-CSRF-Token': csrf };
}

/** The cluster's nodes as GET /clusters/{id}/nodes lists them (each spec names the fields it reads). */
export async function nodesOf<T>(request: APIRequestContext, clusterId: string): Promise<T[]> {
  const answer = await request.get(`/api/v1/clusters/${clusterId}/nodes`);
  expect(answer.ok()).toBeTruthy();
  return ((await answer.json()) as { items: T[] }).items;
}

/** The cluster's apply plans of one finding, newest first. */
export async function plansOf<T extends { finding_id: string | null }>(
  request: APIRequestContext,
  clusterId: string,
  findingId: string,
): Promise<T[]> {
  const answer = await request.get(`/api/v1/clusters/${clusterId}/apply-plans`);
  expect(answer.ok()).toBeTruthy();
  return ((await answer.json()) as T[]).filter((p) => p.finding_id === findingId);
}

/** Ask for an advice run (the cluster's "advise now"); one already queued is fine. */
export async function adviseNow(page: Page, clusterId: string) {
  const answer = await page.request.post(`/api/v1/clusters/${clusterId}/advise`, {
    headers: await csrfHeaders(page.context()),
  });
  expect([202, 429], await answer.text()).toContain(answer.status());
}

/** The plans list item of the newest plan in the panel (plans are listed newest first). */
export function newestPlan(panel: Locator): Locator {
  return panel.getByRole('heading', { name: 'Plans for this finding' }).locator('xpath=following-sibling::ul[1]/li[1]');
}

/** A plan's status in words ("Waiting for approval", "Done", ...): the item's first line, not a step's. */
export function planStatus(plan: Locator): Locator {
  return plan.locator(':scope > strong');
}

/** A step's row in the run table, by its position. */
export function runRow(plan: Locator, position: number): Locator {
  return plan
    .getByRole('table', { name: 'How far each step has run' })
    .getByRole('row')
    .filter({ has: plan.page().getByRole('cell', { name: new RegExp(`^${position} `) }) });
}

/** Wait until the newest plan's status reads `words`, on the open page: the panel reads the plans again every few
 * seconds while one runs (the front end's RUNNING_POLL_MS), as a user watching a run sees it; a reload costs the
 * browser a whole page each time. */
export async function untilPlanReads(panel: Locator, words: string, timeout: number) {
  await expect(planStatus(newestPlan(panel))).toHaveText(words, { timeout });
}

/** Wait, on the open page (the panel polls while a plan runs), until step `position` of the newest plan reads
 * `words`. */
export async function untilStepReads(panel: Locator, position: number, words: string | RegExp, timeout: number) {
  await expect(runRow(newestPlan(panel), position)).toContainText(words, { timeout });
}
