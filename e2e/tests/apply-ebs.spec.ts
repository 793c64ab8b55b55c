import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from '../fixtures';
import { adviseNow, csrfHeaders, newestPlan, nodesOf, planStatus, plansOf, runRow, untilPlanReads, untilStepReads } from '../apply-plan';
import type { APIRequestContext, Page } from '@playwright/test';

/**
 * Apply a volume fix end to end through the UI (docs/apply.md): the demo cluster's gp2 -> gp3 fix is applied to a
 * volume in the AWS account (the moto server scripts/test.sh starts; the e2e server's HEADROOM_AWS_ENDPOINT_URL and
 * this spec's HEADROOM_E2E_AWS_ENDPOINT) through the organisation's write role, verified and recorded.
 *
 * The demo's volumes are simulated and moto cannot create a volume with a chosen ID, so the spec creates two gp2
 * volumes in moto (350 GiB, as the demo's legacy nodes have): one carrying the organisation's volume tag, one with
 * the tag's key and another value, and gives the demo's two gp2 data volumes their IDs and tags (as moto reports
 * them) through Headroom's API (PATCH /clusters/{id}/demo-volumes/{volume_id}; the simulation goes on, under the
 * real IDs). The demo then finds each one's BurstBalance drained, and the fix of that finding is gp2 -> gp3 at
 * 3,000 IOPS and 250 MiB/s: three steps on one volume, made in one modification (AWS allows one every six hours).
 *
 * Through the UI: the owner turns apply on with the volume tag, downloads the write role's CloudFormation template,
 * (the customer's stack: tools/aws_account.py creates the role in moto's IAM from it), enters the role's ARN, and
 * allows the demo cluster; an admin (joined through an invitation) proposes each fix; the owner approves and runs
 * them. The tagged volume's run goes to Done (each step read back from DescribeVolumesModifications, watched
 * HEADROOM_APPLY_WATCH_SECONDS, 120 s in scripts/test.sh); moto then reports the volume gp3; the change ledger and
 * the audit log say it in words; the undo is refused until six hours after the modification started, the time
 * the plan shows. The other volume's run is refused before anything is sent (Headroom checks the tag as its
 * inventory has it; the role's own policy, evaluated by moto's IAM evaluator, refuses it too, as AWS would), and
 * moto still reports it gp2 with no modification. At the end the demo volumes get their simulated IDs back (their
 * history goes with them), the cluster is advised again, and apply is off again, so later specs see the demo as
 * before.
 */

const TAG_KEY = 'headroom-apply';
const TAG_VALUE = 'true';
const RULE = 'gp2-burst-depletion';
const REPO = fileURLToPath(new URL('../..', import.meta.url));

interface FindingItem {
  id: string;
  rule: string;
  status: string;
  entity_id: string | null;
}

interface NodeItem {
  id: string;
  store_address: string;
  instance: { availability_zone: string | null } | null;
  volumes: { volume_id: string; role: string; volume_type: string }[];
}

interface StepRun {
  position: number;
  status: string;
  before: unknown;
  read_back: unknown;
  modification_state: string | null;
  undo_not_before: string | null;
  error: string | null;
}

interface Plan {
  id: string;
  finding_id: string | null;
  status: string;
  outcome: string;
  steps: { position: number; target: string; change: { key: string } }[];
  step_runs: StepRun[];
}

interface MotoVolume {
  type: string;
  iops: number | null;
  throughput: number | null;
  tags: Record<string, string>;
  modifications: {
    state: string;
    target_type: string | null;
    target_iops: number | null;
    target_throughput: number | null;
  }[];
}

/** The AWS account's side (tools/aws_account.py, boto3 against the moto server); one JSON line back. */
function aws<T>(...args: string[]): T {
  if (!process.env.HEADROOM_E2E_AWS_ENDPOINT) {
    throw new Error('Set HEADROOM_E2E_AWS_ENDPOINT to the moto server the e2e server uses (scripts/test.sh does)');
  }
  const out = execFileSync('uv', ['run', '--locked', '--project', REPO, 'python', join(REPO, 'e2e/tools/aws_account.py'), ...args], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as T;
}

async function findings(request: APIRequestContext, clusterId: string): Promise<FindingItem[]> {
  const answer = await request.get(`/api/v1/clusters/${clusterId}/findings`, { params: { limit: 200 } });
  expect(answer.ok()).toBeTruthy();
  return ((await answer.json()) as { items: FindingItem[] }).items;
}

async function planOf(request: APIRequestContext, clusterId: string, findingId: string): Promise<Plan> {
  const plans = await plansOf<Plan>(request, clusterId, findingId);
  expect(plans.length).toBeGreaterThan(0);
  return plans[0]!;
}

/** Give a demo volume a real volume's ID and tags (null: its simulated ID back); the new ID. */
async function giveVolumeId(page: Page, clusterId: string, volumeId: string, real: string | null, tags = {}) {
  const answer = await page.request.patch(`/api/v1/clusters/${clusterId}/demo-volumes/${volumeId}`, {
    data: { volume_id: real, tags },
    headers: await csrfHeaders(page.context()),
  });
  expect(answer.status(), await answer.text()).toBe(200);
  return ((await answer.json()) as { volume_id: string }).volume_id;
}

/** Advise until the cluster has an open finding of RULE on each of these volumes; their findings in that order. */
async function openFindingsOn(page: Page, clusterId: string, volumeIds: string[]): Promise<FindingItem[]> {
  let found: FindingItem[] = [];
  await expect
    .poll(
      async () => {
        await adviseNow(page, clusterId);
        const open = (await findings(page.request, clusterId)).filter((f) => f.rule === RULE && f.status === 'open');
        found = volumeIds.map((v) => open.find((f) => f.entity_id === v)).filter((f): f is FindingItem => !!f);
        return found.length;
      },
      { timeout: 180_000, intervals: [3_000, 7_000] },
    )
    .toBe(volumeIds.length);
  return found;
}

test('apply: a gp2 volume becomes gp3 through the write role, an untagged one is refused, all through the UI', async ({
  page,
  browser,
  openDemoCluster,
}) => {
  // One run of three steps on one volume, watched 120 s, on a loaded 2-core CI machine.
  test.setTimeout(900_000);
  const cluster = await openDemoCluster();
  const gp2 = (await nodesOf<NodeItem>(page.request, cluster.id))
    .flatMap((n) => n.volumes.filter((v) => v.role === 'data' && v.volume_type === 'gp2').map((v) => ({ node: n, ...v })))
    .sort((a, b) => a.node.store_address.localeCompare(b.node.store_address));
  expect(gp2.length).toBe(2);
  // The IDs the demo volumes are given, to give them their simulated IDs back at the end (null). A run of this spec
  // that died half-way may have left moto IDs on them: they are replaced all the same (the API takes the current ID).
  const given: string[] = [];
  const admin = await browser.newContext({ baseURL: new URL(page.url()).origin });

  try {
    const az = gp2[0]!.node.instance?.availability_zone ?? 'us-east-1a';
    const tagged = aws<{ volume_id: string; tags: Record<string, string> }>(
      'create-volume', '--az', az, '--size', '350', '--tag', `${TAG_KEY}=${TAG_VALUE}`);
    const untagged = aws<{ volume_id: string; tags: Record<string, string> }>(
      'create-volume', '--az', az, '--size', '350', '--tag', `${TAG_KEY}=someone-else`);

    await test.step('the demo gp2 volumes get the IDs and tags of two volumes in the AWS account', async () => {
      for (const [demoVolume, real] of [[gp2[0]!, tagged], [gp2[1]!, untagged]] as const) {
        const tags = aws<MotoVolume>('describe-volume', real.volume_id).tags; // as AWS reports them
        given.push(await giveVolumeId(page, cluster.id, demoVolume.volume_id, real.volume_id, tags));
      }
      expect(given).toEqual([tagged.volume_id, untagged.volume_id]);
    });
    const [taggedFinding, untaggedFinding] = await openFindingsOn(page, cluster.id, given);

    let roleArn = '';
    await test.step('the owner turns apply on with the volume tag, creates the write role from its template, enters its ARN', async () => {
      await page.goto('/settings/apply');
      const form = page.getByRole('form', { name: 'Apply settings' });
      await form.getByRole('checkbox', { name: /Allow Headroom to apply approved fixes/ }).check();
      await form.getByLabel('Volume tag key').fill(TAG_KEY);
      await form.getByLabel('Volume tag value').fill(TAG_VALUE);
      await form.getByRole('button', { name: 'Save' }).click();
      await expect(page.getByText('Saved: apply is on for the organisation.')).toBeVisible();
      // The template carries the organisation's external ID and the tag just saved: the customer's stack.
      const downloading = page.waitForEvent('download');
      await page.getByRole('button', { name: 'Download the CloudFormation template' }).click();
      const template = join(mkdtempSync(join(tmpdir(), 'headroom-apply-')), 'write-role.cfn.yaml');
      await (await downloading).saveAs(template);
      roleArn = aws<{ arn: string }>('create-role', template).arn;
      expect(roleArn).toMatch(/^arn:aws:iam::\d{12}:role\//);
      // The role's own policy refuses the volume without the tag, as AWS evaluates it (moto's EC2 would not).
      expect(aws<{ allowed: boolean }>('may-modify', roleArn.split('/').at(-1)!, untagged.volume_id).allowed).toBe(false);
      expect(aws<{ allowed: boolean }>('may-modify', roleArn.split('/').at(-1)!, tagged.volume_id).allowed).toBe(true);
      await page.reload();
      await form.getByLabel('Write role ARN').fill(roleArn);
      await form.getByRole('button', { name: 'Save' }).click();
      await expect(page.getByText('Saved: apply is on for the organisation.')).toBeVisible();
      await page.goto(cluster.path);
      const allow = page.getByRole('checkbox', { name: 'Allow apply on this cluster' });
      if (!(await allow.isChecked())) await allow.click();
      await expect(allow).toBeChecked();
    });

    const adminPage = await admin.newPage();
    await test.step('an admin joins through an invitation', async () => {
      const email = `e2e-apply-ebs-admin-${Date.now()}@example.com`;
      const invited = await page.request.post('/api/v1/org/invitations', {
        data: { email, role: 'admin' },
        headers: await csrfHeaders(page.context()),
      });
      expect(invited.status(), await invited.text()).toBe(201);
      const acceptUrl = new URL(((await invited.json()) as { accept_url: string }).accept_url);
      await adminPage.goto(`${acceptUrl.pathname}${acceptUrl.search}`);
      const form = adminPage.getByRole('form', { name: 'Accept the invitation' });
      await form.getByLabel('Password').fill(`pw-${Date.now()}-apply-ebs-admin`);
      await form.getByRole('button', { name: 'Join the organisation' }).click();
      await expect(adminPage).not.toHaveURL(/accept-invitation/, { timeout: 15_000 });
    });

    const adminPanel = adminPage.getByRole('region', { name: 'Apply this fix' });
    const panel = page.getByRole('region', { name: 'Apply this fix' });
    /** The admin proposes the finding's plan (its steps in words first); the owner approves it and runs it. */
    const proposeApproveRun = async (finding: FindingItem, volumeId: string) => {
      const path = `${cluster.path}/findings/${finding.id}`;
      await adminPage.goto(path);
      const steps = adminPanel.getByRole('table', { name: 'Steps, one at a time, in order' });
      await expect(steps.getByRole('row').filter({ hasText: volumeId }).first()).toBeVisible({ timeout: 30_000 });
      await expect(steps.getByRole('row').filter({ hasText: /gp2 → gp3/ })).toHaveCount(1);
      await adminPanel.getByRole('button', { name: 'Propose this plan' }).click();
      await expect(planStatus(newestPlan(adminPanel))).toHaveText('Waiting for approval', { timeout: 20_000 });
      await page.goto(path);
      const plan = newestPlan(panel);
      await plan.getByRole('button', { name: 'Approve' }).click();
      await expect(planStatus(plan)).toHaveText('Approved', { timeout: 20_000 });
      await plan.getByRole('button', { name: 'Run' }).click();
      await expect(plan.getByRole('table', { name: 'How far each step has run' })).toBeVisible({ timeout: 20_000 });
    };

    await test.step('the tagged volume: proposed, approved and run; every step applied in one modification', async () => {
      await proposeApproveRun(taggedFinding!, tagged.volume_id);
      await untilStepReads(panel, 1, /Applied, watching|Done/, 120_000);
      const seen = aws<MotoVolume>('describe-volume', tagged.volume_id);
      expect(seen.modifications.length).toBe(1); // one ModifyVolume for the type, the IOPS and the throughput
      const [modification] = seen.modifications;
      expect([modification!.target_type, modification!.target_iops, modification!.target_throughput]).toEqual([
        'gp3', 3000, 250,
      ]);
    });

    await test.step('the untagged volume: refused in words before anything is sent, and left gp2', async () => {
      await proposeApproveRun(untaggedFinding!, untagged.volume_id);
      await untilPlanReads(panel, 'Failed', 120_000);
      const plan = newestPlan(panel);
      await expect(plan.getByRole('status')).toContainText('Nothing was changed.');
      await expect(runRow(plan, 1)).toContainText(
        `The volume ${untagged.volume_id} does not carry the tag ${TAG_KEY}=${TAG_VALUE} your write role requires`,
      );
      await expect(plan.getByRole('button', { name: /^Undo/ })).toHaveCount(0);
      const seen = aws<MotoVolume>('describe-volume', untagged.volume_id);
      expect([seen.type, seen.modifications]).toEqual(['gp2', []]);
    });

    await test.step('the tagged volume: verified, watched and Done; AWS reports it gp3', async () => {
      await page.goto(`${cluster.path}/findings/${taggedFinding!.id}`);
      await untilPlanReads(panel, 'Done', 480_000);
      const plan = newestPlan(panel);
      await expect(plan.getByRole('status')).toHaveText('Done: 3 steps applied and verified.');
      const stored = await planOf(page.request, cluster.id, taggedFinding!.id);
      expect(stored.status).toBe('succeeded');
      expect(stored.step_runs.map((r) => r.status)).toEqual(['done', 'done', 'done']);
      for (const r of stored.step_runs) expect(['optimizing', 'completed']).toContain(r.modification_state);
      await expect(runRow(plan, 1)).toContainText('gp2 → gp3');
      await expect(runRow(plan, 1)).toContainText(/AWS: (optimizing|completed)/);
      await expect(runRow(plan, 2)).toContainText('Modified together with step 1');
      for (const position of [1, 2, 3]) {
        await expect(runRow(plan, position)).toContainText('Done');
        await expect(runRow(plan, position).getByRole('listitem').first()).toBeVisible(); // the guards in words
      }
      const seen = aws<MotoVolume>('describe-volume', tagged.volume_id);
      expect([seen.type, seen.iops, seen.throughput]).toEqual(['gp3', 3000, 250]);

      // The undo: offered from six hours after the modification started (the plan says when); refused before.
      const undoFrom = new Date(stored.step_runs[0]!.undo_not_before!);
      const hours = (undoFrom.getTime() - Date.now()) / 3_600_000;
      expect(hours).toBeGreaterThan(5.5);
      expect(hours).toBeLessThanOrEqual(6);
      await expect(plan.getByText(/^Volume changes can be undone from .+ \(AWS allows one modification of a volume every six hours\)/)).toBeVisible();
      await plan.getByRole('button', { name: 'Undo volume changes' }).click();
      await expect(plan.getByRole('alert')).toContainText(
        'AWS allows a volume to be modified again only six hours after its last modification started',
      );
      expect(aws<MotoVolume>('describe-volume', tagged.volume_id).type).toBe('gp3');
    });

    await test.step('the change ledger and the audit log say it in words', async () => {
      await page.goto(cluster.path);
      const ledger = page.getByRole('list', { name: 'Changes' });
      const entry = ledger.getByRole('listitem').filter({ hasText: `volume.type on ${tagged.volume_id}: gp2 → gp3` });
      // The ledger measures each change's effect as it loads: slow on a loaded machine.
      await expect(entry.first()).toBeVisible({ timeout: 120_000 });
      await expect(entry.first()).toContainText('Headroom, plan run by demo@example.com');
      await page.goto('/settings/audit-log');
      const log = page.getByRole('table', { name: 'Audit log' });
      for (const action of [
        'Apply: plan proposed',
        'Apply: plan approved',
        'Apply: run started',
        'Apply: step applied',
        'Apply: step verified',
        'Apply: run succeeded',
        'Apply: step failed',
        'Apply: run failed',
      ]) {
        await expect(log.getByRole('cell', { name: action, exact: true }).first()).toBeVisible();
      }
      await expect(log.getByText(/^apply\./)).toHaveCount(0);
    });
  } finally {
    // Leave the demo as later specs expect it: its volumes at their simulated IDs (their history with them),
    // advised again, and apply off.
    await admin.close();
    const headers = await csrfHeaders(page.context());
    for (const volumeId of given) await giveVolumeId(page, cluster.id, volumeId, null);
    await page.request.put(`/api/v1/clusters/${cluster.id}/apply-settings`, { data: { enabled: false }, headers });
    await page.request.put('/api/v1/org/apply-settings', { data: { enabled: false }, headers });
  }

  await test.step('the demo has its simulated volumes and their findings as before', async () => {
    const volumes = (await nodesOf<NodeItem>(page.request, cluster.id)).flatMap((n) => n.volumes.map((v) => v.volume_id));
    for (const v of gp2) expect(volumes).toContain(v.volume_id);
    await openFindingsOn(page, cluster.id, gp2.map((v) => v.volume_id));
  });
});
