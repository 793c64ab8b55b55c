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
    const row = await screen.findByRole('row', { name: /volume\.type/ });
    expect(row).toHaveTextContent('gp2 → gp3');
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
});
