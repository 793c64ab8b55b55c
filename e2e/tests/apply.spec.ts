import { readFileSync } from 'node:fs';
import { expect, test } from '../fixtures';
import { adviseNow, csrfHeaders, newestPlan, nodesOf, planStatus, plansOf, runRow, untilPlanReads, untilStepReads } from '../apply-plan';
import type { APIRequestContext, Page } from '@playwright/test';

/**
 * Apply, verify, roll back, through the UI (docs/apply.md), end to end: the demo owner turns apply on for the
 * organisation and the demo cluster, an admin proposes the plan of the block cache finding (a TiKV key that
 * changes online, one step per node), cannot approve their own plan, the owner approves it and runs it.
 *
 * The demo's TiKV nodes are simulated and their status addresses made up, so the spec first points the finding's
 * two nodes at TiKV status port stand-ins (backend/tests/tikv_status_server.py, started by scripts/test.sh; their
 * addresses in HEADROOM_E2E_TIKV_STATUS_FILE) through Headroom's own API, has Headroom read their config there and
 * advise again: the plan's "before" value is then the stand-in's. The e2e server watches each step for
 * HEADROOM_APPLY_WATCH_SECONDS (20 s in scripts/test.sh) and then until every guard has its first point after the
 * step (docs/thresholds/apply-guards.md#late-data): the demo writes a minute's points once the minute is over, so
 * a step is watched one to two minutes, judged on the minute's tick that follows the demo's ingest; the windows
 * compared stay the guards' own 15 minutes.
 *
 * Three plans of the same finding, one after the other (one open plan per finding):
 * 1. run to the end: every step done, the stand-ins report the new value, the plan says "Done";
 * 2. a guard trips and the run rolls back: while step 1 is watched, its node moves to another status address (as a
 *    TiKV pod rescheduled by the operator does). Headroom can then tell no volume or store of the step, so no
 *    guard can be read, and a step is never judged blind (apply/run.py read_guards): the run stops and sets the
 *    old value back. The demo's simulated metrics give no real regression to trip on, and this is a real path
 *    whose words the panel must show; the stand-in reports the old value again;
 * 3. stopped with the panel's Stop during step 1's watch: step 1 stays applied (done, not judged), step 2 is
 *    recorded as not started.
 * The audit log says all of it in words. Undo in the panel is for volume changes only (a TiKV key is set back by
 * the rollback), so it is not offered here. At the end the nodes get their simulated addresses back, the demo's
 * next ingest puts the simulated config back and the cluster is advised again, so later specs see the demo as it
 * was; apply is turned off again.
 */

const KEY = 'storage.block-cache.capacity';
const START_VALUE = '8GiB'; // the stand-ins' own (tikv_status_server.BASE_CONFIG), set again before each plan
const FIX_VALUE = '4GiB'; // the finding's fix on the demo's m5.2xlarge stores (4 GB per 32 GB of memory)

interface FindingItem {
  id: string;
  rule: string;
  status: string;
}

interface NodeItem {
  id: string;
  store_address: string;
  status_address: string | null;
}

interface PlanStep {
  position: number;
  target: string;
  change: { key: string; current: unknown; proposed: unknown; entity?: { node?: string | null } | null };
}

interface PlanPreview {
  steps: PlanStep[];
  blocked: string[];
}

interface StepRun {
  position: number;
  status: string;
}

interface Plan {
  id: string;
  finding_id: string | null;
  status: string;
  steps: PlanStep[];
  step_runs: StepRun[];
}

/** The stand-ins' addresses ("127.0.0.1:<port>"), as scripts/test.sh has them written. */
function standInAddresses(): string[] {
  const file = process.env.HEADROOM_E2E_TIKV_STATUS_FILE;
  if (!file) {
    throw new Error(
      'Set HEADROOM_E2E_TIKV_STATUS_FILE to the addresses file of the TiKV status stand-ins ' +
        '(python backend/tests/tikv_status_server.py --nodes 3 --addresses-file PATH; scripts/test.sh starts them)',
    );
  }
  const addresses = JSON.parse(readFileSync(file, 'utf8')) as string[];
  if (addresses.length < 3) throw new Error(`${file}: this spec needs 3 stand-ins, found ${addresses.length}`);
  return addresses;
}

/** What the stand-in at `address` reports for the key, read with TiKV's GET /config. */
async function standInValue(request: APIRequestContext, address: string): Promise<string> {
  const answer = await request.get(`http://${address}/config`);
  expect(answer.ok()).toBeTruthy();
  const config = (await answer.json()) as { storage: { 'block-cache': { capacity: string } } };
  return config.storage['block-cache'].capacity;
}

/** Set the key on the stand-in as an operator would by hand (TiKV's POST /config). */
async function setStandIn(request: APIRequestContext, address: string, value: string) {
  const answer = await request.post(`http://${address}/config`, { data: { [KEY]: value } });
  expect(answer.status(), await answer.text()).toBe(200);
}

async function findingOf(request: APIRequestContext, clusterId: string, rule: string): Promise<FindingItem> {
  const answer = await request.get(`/api/v1/clusters/${clusterId}/findings`, { params: { limit: 200 } });
  expect(answer.ok()).toBeTruthy();
  const items = ((await answer.json()) as { items: FindingItem[] }).items;
  const found = items.find((f) => f.rule === rule);
  if (!found) throw new Error(`no ${rule} finding on the demo cluster`);
  return found;
}

async function previewOf(request: APIRequestContext, findingId: string): Promise<PlanPreview> {
  const answer = await request.get(`/api/v1/findings/${findingId}/apply-plan`);
  expect(answer.ok()).toBeTruthy();
  return (await answer.json()) as PlanPreview;
}

async function setStatusAddress(page: Page, clusterId: string, nodeId: string, address: string) {
  const answer = await page.request.patch(`/api/v1/clusters/${clusterId}/nodes/${nodeId}`, {
    data: { status_address: address },
    headers: await csrfHeaders(page.context()),
  });
  expect(answer.status(), await answer.text()).toBe(200);
}

/** Withdraw or stop what an earlier run of this spec left open, so the finding can be proposed again. */
async function clearOpenPlans(page: Page, clusterId: string, findingId: string) {
  for (const plan of await plansOf<Plan>(page.request, clusterId, findingId)) {
    const headers = await csrfHeaders(page.context());
    if (plan.status === 'proposed' || plan.status === 'approved') {
      await page.request.post(`/api/v1/apply-plans/${plan.id}/reject`, { data: { note: 'e2e: again' }, headers });
    } else if (plan.status === 'running') {
      await page.request.post(`/api/v1/apply-plans/${plan.id}/stop`, { headers });
    }
  }
}

test('apply: a run to the end, a guard that trips and rolls back, a stop, all through the UI', async ({
  page,
  browser,
  openDemoCluster,
}) => {
  // Three runs with a watch of one to two minutes per step, on a loaded 2-core CI machine.
  test.setTimeout(1_200_000);
  const standIns = standInAddresses();
  const cluster = await openDemoCluster();
  const finding = await findingOf(page.request, cluster.id, 'block-cache-size');
  await clearOpenPlans(page, cluster.id, finding.id);
  const findingPath = `${cluster.path}/findings/${finding.id}`;

  // The finding's nodes (one step each), in the plan's order, and the addresses they had.
  const stores = [
    ...new Set((await previewOf(page.request, finding.id)).steps.map((s) => s.change.entity?.node ?? '')),
  ].filter((s) => s);
  expect(stores.length).toBe(2);
  const nodes = (await nodesOf<NodeItem>(page.request, cluster.id)).filter((n) => stores.includes(n.store_address));
  const originalAddress = new Map(nodes.map((n) => [n.id, n.status_address ?? '']));
  // A run of this spec that stopped half-way left the nodes on stand-ins: their made-up addresses are the demo's.
  const simulatedAddress = (n: NodeItem) => `${n.store_address.split(':')[0]}:20180`;
  const standInOf = new Map(nodes.map((n, i) => [n.id, standIns[i]!]));

  const admin = await browser.newContext({ baseURL: new URL(page.url()).origin });
  try {
    await test.step("point the finding's nodes at the stand-ins; Headroom reads their config and advises again", async () => {
      for (const address of standIns) await setStandIn(page.request, address, START_VALUE);
      const headers = await csrfHeaders(page.context());
      for (const node of nodes) {
        await setStatusAddress(page, cluster.id, node.id, standInOf.get(node.id)!);
        const read = await page.request.post(`/api/v1/clusters/${cluster.id}/nodes/${node.id}/config/refresh`, {
          headers,
        });
        expect(read.ok(), await read.text()).toBeTruthy(); // 201 for a new config version, 200 for the same one
        const stored = (await read.json()) as { source: string; config: { storage: { 'block-cache': { capacity: string } } } };
        expect([stored.source, stored.config.storage['block-cache'].capacity]).toEqual(['status_port', START_VALUE]);
      }
      // The plan's steps now go to the stand-ins, and the value before each is the one the stand-in reported (an
      // advice run already under way may have read the config before: ask again until one reads it).
      await expect
        .poll(
          async () => {
            await adviseNow(page, cluster.id);
            return (await previewOf(page.request, finding.id)).steps
              .map((s) => `${s.target} ${String(s.change.current)} ${String(s.change.proposed)}`)
              .sort();
          },
          { timeout: 120_000, intervals: [3_000, 7_000] },
        )
        .toEqual(nodes.map((n) => `${standInOf.get(n.id)} ${START_VALUE} ${FIX_VALUE}`).sort());
    });

    await test.step('the owner turns apply on for the organisation and the demo cluster', async () => {
      await page.goto('/settings/apply');
      const form = page.getByRole('form', { name: 'Apply settings' });
      await form.getByRole('checkbox', { name: /Allow Headroom to apply approved fixes/ }).check();
      await form.getByRole('button', { name: 'Save' }).click();
      await expect(page.getByText('Saved: apply is on for the organisation.')).toBeVisible();
      await page.goto(cluster.path);
      const allow = page.getByRole('checkbox', { name: 'Allow apply on this cluster' });
      // Checked once the server has saved it (the box shows the stored setting, not the click).
      if (!(await allow.isChecked())) await allow.click();
      await expect(allow).toBeChecked();
      await expect(page.getByText('Headroom may apply approved fixes on this cluster.')).toBeVisible();
    });

    const adminPage = await admin.newPage();
    await test.step('an admin joins through an invitation', async () => {
      const email = `e2e-apply-admin-${Date.now()}@example.com`;
      const invited = await page.request.post('/api/v1/org/invitations', {
        data: { email, role: 'admin' },
        headers: await csrfHeaders(page.context()),
      });
      expect(invited.status(), await invited.text()).toBe(201);
      const acceptUrl = new URL(((await invited.json()) as { accept_url: string }).accept_url);
      await adminPage.goto(`${acceptUrl.pathname}${acceptUrl.search}`);
      const form = adminPage.getByRole('form', { name: 'Accept the invitation' });
      await form.getByLabel('Password').fill(`pw-${Date.now()}-apply-admin`);
      await form.getByRole('button', { name: 'Join the organisation' }).click();
      await expect(adminPage).not.toHaveURL(/accept-invitation/, { timeout: 15_000 });
    });

    const adminPanel = adminPage.getByRole('region', { name: 'Apply this fix' });
    const panel = page.getByRole('region', { name: 'Apply this fix' });

    /** The admin proposes the finding's plan; the owner approves it and presses Run. */
    const proposeApproveRun = async () => {
      await adminPage.goto(findingPath);
      await adminPanel.getByRole('button', { name: 'Propose this plan' }).click();
      // The lasting state, not the form's transient "Proposed: ..." (a refetch can replace it before a check).
      await expect(planStatus(newestPlan(adminPanel))).toHaveText('Waiting for approval', { timeout: 20_000 });
      await page.goto(findingPath);
      const plan = newestPlan(panel);
      await expect(planStatus(plan)).toHaveText('Waiting for approval', { timeout: 20_000 });
      await plan.getByRole('button', { name: 'Approve' }).click();
      await expect(planStatus(plan)).toHaveText('Approved', { timeout: 20_000 });
      await plan.getByRole('button', { name: 'Run' }).click();
      await expect(plan.getByRole('table', { name: 'How far each step has run' })).toBeVisible({ timeout: 20_000 });
      const [newest] = await plansOf<Plan>(page.request, cluster.id, finding.id);
      expect(newest!.status).not.toBe('approved');
      return newest!;
    };

    await test.step("the admin sees the plan in words and proposes it; approving one's own plan is refused", async () => {
      await adminPage.goto(findingPath);
      const steps = adminPanel.getByRole('table', { name: 'Steps, one at a time, in order' });
      for (const node of nodes) {
        await expect(
          steps.getByRole('row').filter({ hasText: `TiKV setting: ${KEY} ${START_VALUE} → ${FIX_VALUE}` })
            .filter({ hasText: standInOf.get(node.id)! }),
        ).toBeVisible({ timeout: 30_000 });
      }
      await expect(adminPanel.getByRole('heading', { name: 'Guards after each step' })).toBeVisible();
      await adminPanel.getByRole('button', { name: 'Propose this plan' }).click();
      const plan = newestPlan(adminPanel);
      await expect(planStatus(plan)).toHaveText('Waiting for approval', { timeout: 20_000 });
      await plan.getByRole('button', { name: 'Approve' }).click();
      await expect(
        plan.getByRole('alert').filter({ hasText: 'You proposed this plan: another owner or admin must approve it.' }),
      ).toBeVisible();
    });

    await test.step('the owner approves it and runs it: every step is applied, read back, watched and done', async () => {
      await page.goto(findingPath);
      const plan = newestPlan(panel);
      await plan.getByRole('button', { name: 'Approve' }).click();
      await expect(planStatus(plan)).toHaveText('Approved', { timeout: 20_000 });
      await plan.getByRole('button', { name: 'Run' }).click();
      await expect(plan.getByRole('table', { name: 'How far each step has run' })).toBeVisible({ timeout: 20_000 });
      // Two steps, each watched until the guards' first minute after it is stored, judged on that minute's tick.
      await untilPlanReads(panel, 'Done', 600_000);
      const done = newestPlan(panel);
      await expect(done.getByRole('status')).toHaveText('Done: 2 steps applied and verified.');
      for (const position of [1, 2]) {
        const row = runRow(done, position);
        await expect(row).toContainText('Done');
        await expect(row).toContainText(`${KEY} ${START_VALUE} → ${FIX_VALUE}`);
        // the guards' verdicts in words: each held or improved, none tripped
        await expect(row.getByRole('listitem').filter({ hasText: /^Read latency (held|improved|rose)/ })).toBeVisible();
      }
      for (const address of standIns.slice(0, 2)) expect(await standInValue(page.request, address)).toBe(FIX_VALUE);
    });

    await test.step('a guard trips during a watch: the run rolls back and the stand-in has its old value again', async () => {
      for (const address of standIns) await setStandIn(page.request, address, START_VALUE); // as by hand
      const started = await proposeApproveRun();
      const first = started.steps.find((s) => s.position === 1)!;
      const moved = nodes.find((n) => standInOf.get(n.id) === first.target)!;
      const plan = newestPlan(panel);
      await untilStepReads(panel, 1, 'Applied, watching', 120_000);
      expect(await standInValue(page.request, first.target)).toBe(FIX_VALUE);
      // The node moves to the third stand-in while step 1 is watched (a rescheduled TiKV pod): what the step
      // touched can no longer be told, so no guard can be read and the step is not judged blind.
      await setStatusAddress(page, cluster.id, moved.id, standIns[2]!);
      await untilPlanReads(panel, 'Rolled back', 300_000);
      await expect(plan.getByRole('status')).toContainText(/^Rolled back: After step 1 \(/);
      await expect(plan.getByRole('status')).toContainText('Every changed node has its previous value again.');
      const row = runRow(plan, 1);
      await expect(row).toContainText('Undone');
      await expect(row).toContainText(`set back to ${START_VALUE}`);
      await expect(row.getByRole('listitem').filter({ hasText: /^No guard could be read for this step/ })).toBeVisible();
      await expect(runRow(plan, 2)).toContainText('Not started (rolled back)');
      expect(await standInValue(page.request, first.target)).toBe(START_VALUE); // restored on the node itself
      expect(await standInValue(page.request, standIns[2]!)).toBe(START_VALUE); // never touched
      await setStatusAddress(page, cluster.id, moved.id, first.target);
    });

    await test.step('Stop during a watch: step 1 stays applied (done), step 2 is recorded as not started', async () => {
      const started = await proposeApproveRun();
      const [first, second] = [1, 2].map((p) => started.steps.find((s) => s.position === p)!);
      await untilStepReads(panel, 1, 'Applied, watching', 120_000);
      const plan = newestPlan(panel);
      await plan.getByRole('button', { name: 'Stop' }).click();
      await untilPlanReads(panel, 'Stopped', 120_000);
      await expect(plan.getByRole('status')).toContainText(/^Stopped by demo@example\.com at /);
      await expect(runRow(plan, 1)).toContainText('Done');
      await expect(runRow(plan, 1)).toContainText('The run was stopped during this step');
      await expect(runRow(plan, 2)).toContainText('Not started (stopped)');
      await expect(plan.getByRole('button', { name: 'Stop' })).toHaveCount(0);
      expect(await standInValue(page.request, first!.target)).toBe(FIX_VALUE); // a stop undoes nothing
      expect(await standInValue(page.request, second!.target)).toBe(START_VALUE);
    });

    await test.step('the audit log says it all in words', async () => {
      await page.goto('/settings/audit-log');
      const log = page.getByRole('table', { name: 'Audit log' });
      for (const action of [
        'Apply: plan proposed',
        'Apply: plan approved',
        'Apply: run started',
        'Apply: step applied',
        'Apply: step verified',
        'Apply: run succeeded',
        'Apply: guard tripped',
        'Apply: step rolled back',
        'Apply: step skipped',
        'Apply: run rolled back',
        'Apply: run stop requested',
        'Apply: step stopped',
      ]) {
        await expect(log.getByRole('cell', { name: action, exact: true }).first()).toBeVisible();
      }
      await expect(log.getByText(/^apply\./)).toHaveCount(0);
    });
  } finally {
    // Leave the demo as later specs expect it: the nodes at their simulated addresses (the demo's next ingest puts
    // the simulated config back), advised again, and apply off.
    await admin.close();
    const headers = await csrfHeaders(page.context());
    for (const node of nodes) {
      const back = originalAddress.get(node.id)!.startsWith('127.0.0.1') ? simulatedAddress(node) : originalAddress.get(node.id)!;
      await setStatusAddress(page, cluster.id, node.id, back);
    }
    await page.request.put(`/api/v1/clusters/${cluster.id}/apply-settings`, { data: { enabled: false }, headers });
    await page.request.put('/api/v1/org/apply-settings', { data: { enabled: false }, headers });
  }

  await test.step('the demo has its simulated config and its block cache finding as before', async () => {
    await expect
      .poll(
        async () => {
          const sources = [];
          for (const node of nodes) {
            const answer = await page.request.get(`/api/v1/clusters/${cluster.id}/nodes/${node.id}/config`);
            sources.push(((await answer.json()) as { source: string }).source);
          }
          return sources;
        },
        { timeout: 150_000, intervals: [5_000] },
      )
      .toEqual(['simulated', 'simulated']);
    await expect
      .poll(async () => (await previewOf(page.request, finding.id)).steps.map((s) => s.target).sort())
      .toEqual(nodes.map(simulatedAddress).sort());
    await expect
      .poll(
        async () => {
          await adviseNow(page, cluster.id);
          return (await previewOf(page.request, finding.id)).steps.map((s) => String(s.change.current));
        },
        { timeout: 120_000, intervals: [3_000, 7_000] },
      )
      .not.toContain(START_VALUE);
  });
});
