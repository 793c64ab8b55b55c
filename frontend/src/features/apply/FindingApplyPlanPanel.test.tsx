import { screen, waitFor } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { renderWithClient } from '@/test/render';
import { apiUrl, server } from '@/test/server';
import { FindingApplyPlanPanel } from './index';

const CLUSTER = 'c1000000-0000-4000-8000-000000000001';
const FINDING = 'f1000000-0000-4000-8000-000000000001';
const GP3 = { target: 'aws', key: 'volume.type', entity: { kind: 'volume', id: 'vol-1' }, current: 'gp2', proposed: 'gp3' };
const PREVIEW = {
  finding_id: FINDING,
  finding_title: 'IOPS near the ceiling',
  cluster_id: CLUSTER,
  tikv_version: 'v8.5.1',
  steps: [
    {
      position: 1,
      kind: 'ebs_modify_volume',
      target: 'vol-1',
      change: GP3,
      undo: { ...GP3, current: 'gp3', proposed: 'gp2' },
      undo_after_seconds: 21600,
      undo_note: 'Six hours after the modification starts.',
    },
  ],
  refusals: [],
  guards: [{ metric: 'derived.read_latency_ms', label: 'Read latency', unit: 'ms', statistic: 'p99', factor: 1.5,
    floor: 10, watch_minutes: 15, rule: 'Stop if the p99 of read latency rises.' }],
  predicted: { summary: 'headroom 2% -> 50%', monthly_cost_delta_usd: -2 },
  blocked: [],
};

describe('FindingApplyPlanPanel', () => {
  it('shows the steps with their undo, the guards and the saving, and proposes with a window', async () => {
    let posted: unknown;
    server.use(
      http.get(apiUrl(`/findings/${FINDING}/apply-plan`), () => HttpResponse.json(PREVIEW)),
      http.get(apiUrl(`/clusters/${CLUSTER}/apply-plans`), () => HttpResponse.json([])),
      http.post(apiUrl(`/clusters/${CLUSTER}/apply-plans`), async ({ request }) => {
        posted = await request.json();
        return HttpResponse.json({}, { status: 201 });
      }),
    );
    const { user } = renderWithClient(<FindingApplyPlanPanel clusterId={CLUSTER} findingId={FINDING} canManage />);
    const row = await screen.findByRole('row', { name: /Type gp2 → gp3/ });
    expect(row).toHaveTextContent('Volume: Type gp2 → gp3');
    expect(row).toHaveTextContent('after 6 hours');
    expect(screen.getByText('Stop if the p99 of read latency rises.')).toBeInTheDocument();
    expect(screen.getByText(/saves \$2\.00 a month/)).toBeInTheDocument();
    await user.click(screen.getByRole('checkbox', { name: /maintenance window/ }));
    await user.click(screen.getByRole('button', { name: 'Propose this plan' }));
    await waitFor(() =>
      expect(posted).toEqual({
        finding_id: FINDING,
        maintenance_window: { start: '22:00', end: '02:00', weekdays: ['sat', 'sun'] },
      }),
    );
  });

  it('writes each step in words, with the changes table\'s units, not raw keys and numbers', async () => {
    const iops = { target: 'aws', key: 'volume.iops', entity: { kind: 'volume', id: 'vol-1' }, current: 3000,
      proposed: 6000 };
    const cache = { target: 'tikv', key: 'storage.block-cache.capacity',
      entity: { kind: 'node', id: '10.0.1.1:20160', status_address: '10.0.1.1:20180' }, current: '8GiB',
      proposed: '14745MiB' };
    const steps = [
      { ...PREVIEW.steps[0], change: iops, undo: { ...iops, current: 6000, proposed: 3000 } },
      { position: 2, kind: 'tikv_set_config', target: '10.0.1.1:20180', change: cache,
        undo: { ...cache, current: '14745MiB', proposed: '8GiB' }, undo_after_seconds: 0, undo_note: 'At once.' },
    ];
    server.use(
      http.get(apiUrl(`/findings/${FINDING}/apply-plan`), () => HttpResponse.json({ ...PREVIEW, steps })),
      http.get(apiUrl(`/clusters/${CLUSTER}/apply-plans`), () => HttpResponse.json([])),
    );
    renderWithClient(<FindingApplyPlanPanel clusterId={CLUSTER} findingId={FINDING} canManage />);
    expect(await screen.findByRole('row', { name: /Volume: IOPS 3,000 → 6,000/ })).toBeInTheDocument();
    // TiKV's literal, the one tikv.toml takes, with its GiB reading beside the GiB figures of the evidence
    expect(screen.getByRole('row', { name: /TiKV setting: storage\.block-cache\.capacity 8GiB → 14745MiB \(14\.4 GiB\)/ }))
      .toBeInTheDocument();
    expect(screen.queryByText(/volume\.iops|3000/)).not.toBeInTheDocument();
  });

  it('says why it cannot be proposed, and offers no button', async () => {
    server.use(
      http.get(apiUrl(`/findings/${FINDING}/apply-plan`), () =>
        HttpResponse.json({ ...PREVIEW, blocked: ['Apply is turned off for your organisation.'] }),
      ),
      http.get(apiUrl(`/clusters/${CLUSTER}/apply-plans`), () => HttpResponse.json([])),
    );
    renderWithClient(<FindingApplyPlanPanel clusterId={CLUSTER} findingId={FINDING} canManage />);
    expect(await screen.findByText('Apply is turned off for your organisation.')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Propose this plan' })).not.toBeInTheDocument();
  });

  it('runs an approved plan, shows each step live with its guards, and stops a running one', async () => {
    const posted: string[] = [];
    const base = {
      ...PREVIEW, id: 'p1000000-0000-4000-8000-000000000001', maintenance_window: null, proposed_by: 'a@example.com',
      proposed_at: '2026-11-02T12:00:00Z', decided_by: 'b@example.com', decided_at: '2026-11-02T12:05:00Z',
      decision_note: '', run_by: null, run_started_at: null, run_finished_at: null, stop_requested_at: null,
      outcome: '',
    };
    const idle = {
      position: 1, status: 'pending', started_at: null, finished_at: null, watch_until: null, undo_not_before: null,
      undo_confirmed_at: null, before: null, read_back: null, restored: null, modification_state: null, note: null,
      guard_readings: [], error: null,
    };
    const approved = { ...base, status: 'approved', step_runs: [idle] };
    const running = {
      ...base, id: 'p2000000-0000-4000-8000-000000000002', status: 'running', run_by: 'b@example.com',
      run_started_at: '2026-11-02T12:10:00Z', outcome: 'Watching step 1 of 1 until 2026-11-02 12:25 UTC.',
      step_runs: [{
        ...idle, status: 'verifying', started_at: '2026-11-02T12:10:00Z', watch_until: '2026-11-02T12:25:00Z',
        before: 'gp2', read_back: 'gp3', modification_state: 'optimizing',
        guard_readings: [{ metric: 'derived.read_latency_ms', label: 'Read latency', unit: 'ms', entities: ['vol-1'],
          before: 40, after: 2, last_week: null, predicted: null, tripped: false,
          verdict: 'Read latency improved: 40 ms before, 2 ms after.' }],
      }],
    };
    server.use(
      http.get(apiUrl(`/findings/${FINDING}/apply-plan`), () => HttpResponse.json(PREVIEW)),
      http.get(apiUrl(`/clusters/${CLUSTER}/apply-plans`), () => HttpResponse.json([approved, running])),
      http.post(apiUrl('/apply-plans/:id/:action'), ({ params }) => {
        posted.push(`${String(params.action)} ${String(params.id)}`);
        return HttpResponse.json(running);
      }),
    );
    const { user } = renderWithClient(<FindingApplyPlanPanel clusterId={CLUSTER} findingId={FINDING} canManage />);
    await user.click(await screen.findByRole('button', { name: 'Run' }));
    await waitFor(() => expect(posted).toContain(`run ${approved.id}`));
    expect(screen.getByText('Watching step 1 of 1 until 2026-11-02 12:25 UTC.')).toBeInTheDocument();
    const step = screen.getByRole('row', { name: /Applied, watching/ });
    // this watch's set period is over (2 November): the step waits for its guards' data, it does not watch "until" then
    expect(step).toHaveTextContent('Applied, watching: the set period ended 2 Nov 2026, 12:25 UTC; waiting for the first data after the step');
    expect(step).not.toHaveTextContent('until 2 Nov');
    expect(step).toHaveTextContent('Type gp2 → gp3');
    expect(step).toHaveTextContent('(AWS: optimizing)');
    expect(step).toHaveTextContent('Read latency improved: 40 ms before, 2 ms after.');
    await user.click(screen.getByRole('button', { name: 'Stop' }));
    await waitFor(() => expect(posted).toContain(`stop ${running.id}`));
  });

  it('offers the volume undo with its earliest time and shows a refusal in words', async () => {
    const failed = {
      ...PREVIEW, id: 'p3000000-0000-4000-8000-000000000003', maintenance_window: null, proposed_by: null,
      proposed_at: '2026-11-02T12:00:00Z', decided_by: null, decided_at: null, decision_note: '', run_by: null,
      run_started_at: '2026-11-02T12:10:00Z', run_finished_at: '2026-11-02T12:30:00Z', stop_requested_at: null,
      status: 'failed', outcome: 'Stopped: read latency got worse.',
      step_runs: [{
        position: 1, status: 'done', started_at: '2026-11-02T12:10:00Z', finished_at: '2026-11-02T12:11:00Z',
        watch_until: null, undo_not_before: '2026-11-02T18:10:00Z', undo_confirmed_at: null, before: 'gp2',
        read_back: 'gp3', restored: null, modification_state: 'completed', note: null, guard_readings: [], error: null,
      }],
    };
    const refusal = 'AWS allows a volume to be modified again only six hours after its last modification started.';
    server.use(
      http.get(apiUrl(`/findings/${FINDING}/apply-plan`), () => HttpResponse.json(PREVIEW)),
      http.get(apiUrl(`/clusters/${CLUSTER}/apply-plans`), () => HttpResponse.json([failed])),
      http.post(apiUrl(`/apply-plans/${failed.id}/undo`), () =>
        HttpResponse.json({ error: { code: 'too_early', message: refusal, details: null } }, { status: 409 }),
      ),
    );
    const { user } = renderWithClient(<FindingApplyPlanPanel clusterId={CLUSTER} findingId={FINDING} canManage />);
    expect(await screen.findByText(/Volume change can be undone from/)).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Run' })).not.toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Undo volume change' }));
    expect(await screen.findByText(refusal)).toBeInTheDocument();
  });

  it('offers the undo of applied TiKV settings at once, and posts it', async () => {
    const cache = { target: 'tikv', key: 'storage.block-cache.capacity',
      entity: { kind: 'node', id: '10.0.1.1:20160', status_address: '10.0.1.1:20180' }, current: '8GiB',
      proposed: '4GiB' };
    const step = { position: 1, kind: 'tikv_set_config', target: '10.0.1.1:20180', change: cache,
      undo: { ...cache, current: '4GiB', proposed: '8GiB' }, undo_after_seconds: 0, undo_note: 'At once.' };
    const done = {
      ...PREVIEW, steps: [step, { ...step, position: 2 }], id: 'p5000000-0000-4000-8000-000000000005',
      maintenance_window: null, proposed_by: null, proposed_at: '2026-11-02T12:00:00Z', decided_by: null,
      decided_at: null, decision_note: '', run_by: null, run_started_at: '2026-11-02T12:10:00Z',
      run_finished_at: '2026-11-02T12:40:00Z', stop_requested_at: null, status: 'succeeded',
      outcome: 'Done: 2 steps applied and verified.',
      step_runs: [1, 2].map((position) => ({
        position, status: 'done', started_at: '2026-11-02T12:10:00Z', finished_at: '2026-11-02T12:11:00Z',
        watch_until: null, undo_not_before: null, undo_confirmed_at: null, before: '8GiB', read_back: '4GiB',
        restored: null, modification_state: null, note: null, guard_readings: [], error: null,
      })),
    };
    const posted: string[] = [];
    server.use(
      http.get(apiUrl(`/findings/${FINDING}/apply-plan`), () => HttpResponse.json(PREVIEW)),
      http.get(apiUrl(`/clusters/${CLUSTER}/apply-plans`), () => HttpResponse.json([done])),
      http.post(apiUrl(`/apply-plans/${done.id}/undo`), () => {
        posted.push('undo');
        return HttpResponse.json(done);
      }),
    );
    const { user } = renderWithClient(<FindingApplyPlanPanel clusterId={CLUSTER} findingId={FINDING} canManage />);
    await user.click(await screen.findByRole('button', { name: 'Undo setting changes' }));
    await waitFor(() => expect(posted).toEqual(['undo']));
    expect(screen.queryByText(/can be undone from/)).not.toBeInTheDocument();
  });

  it('offers the undo of a TiKV setting whose rollback the node refused', async () => {
    const cache = { target: 'tikv', key: 'storage.block-cache.capacity',
      entity: { kind: 'node', id: '10.0.1.1:20160', status_address: '10.0.1.1:20180' }, current: '8GiB',
      proposed: '12GiB' };
    const step = { position: 1, kind: 'tikv_set_config', target: '10.0.1.1:20180', change: cache,
      undo: { ...cache, current: '12GiB', proposed: '8GiB' }, undo_after_seconds: 0, undo_note: 'At once.' };
    const run = {
      position: 1, status: 'failed', started_at: '2026-11-02T12:10:00Z', finished_at: null, watch_until: null,
      undo_not_before: null, undo_confirmed_at: null, before: '8GiB', read_back: '12GiB', restored: null,
      modification_state: null, note: null, guard_readings: [],
      error: 'Could not set storage.block-cache.capacity back to 8GiB: TiKV refused',
    };
    const failed = {
      ...PREVIEW, steps: [step], id: 'p6000000-0000-4000-8000-000000000006', maintenance_window: null,
      proposed_by: null, proposed_at: '2026-11-02T12:00:00Z', decided_by: null, decided_at: null, decision_note: '',
      run_by: null, run_started_at: '2026-11-02T12:10:00Z', run_finished_at: '2026-11-02T12:30:00Z',
      stop_requested_at: null, status: 'failed', outcome: 'Stopped: read latency got worse.', step_runs: [run],
    };
    // a step that failed before anything was sent (no read-back) has nothing to set back
    const untouched = { ...failed, id: 'p7000000-0000-4000-8000-000000000007',
      step_runs: [{ ...run, read_back: null, before: null, error: 'Could not read the key' }] };
    server.use(
      http.get(apiUrl(`/findings/${FINDING}/apply-plan`), () => HttpResponse.json(PREVIEW)),
      http.get(apiUrl(`/clusters/${CLUSTER}/apply-plans`), () => HttpResponse.json([failed, untouched])),
    );
    renderWithClient(<FindingApplyPlanPanel clusterId={CLUSTER} findingId={FINDING} canManage />);
    expect(await screen.findAllByRole('button', { name: 'Undo setting change' })).toHaveLength(1);
  });

  it('gives a viewer no run, stop or undo button', async () => {
    server.use(
      http.get(apiUrl(`/findings/${FINDING}/apply-plan`), () => HttpResponse.json(PREVIEW)),
      http.get(apiUrl(`/clusters/${CLUSTER}/apply-plans`), () =>
        HttpResponse.json([{ ...PREVIEW, id: 'p4', status: 'approved', maintenance_window: null, proposed_by: null,
          proposed_at: '2026-11-02T12:00:00Z', decided_by: null, decided_at: null, decision_note: '', run_by: null,
          run_started_at: null, run_finished_at: null, stop_requested_at: null, outcome: '', step_runs: [] }]),
      ),
    );
    renderWithClient(<FindingApplyPlanPanel clusterId={CLUSTER} findingId={FINDING} canManage={false} />);
    expect(await screen.findByText('Approved')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Run' })).not.toBeInTheDocument();
  });
});
