import { screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import type { components } from '@/api/schema';
import { changesFromSearch, whatIfHref } from '@/lib/whatif-link';
import { routes } from '@/router';
import { CLUSTER_ID, clusterHandlers, GP2_FINDING } from '@/test/cluster-fixtures';
import { apiError, renderRoutes } from '@/test/render';
import { apiUrl, server } from '@/test/server';

type S = components['schemas'];

// The demo's gp2 volume (350 GiB: a 1,050 IOPS baseline at 3 IOPS/GiB, 250 MiB/s; AWS gp2) moved to gp3 (3,000
// IOPS / 125 MiB/s included at any size; AWS gp3), as POST /clusters/{id}/what-if answers it. Cost: gp2 $0.10 and
// gp3 $0.08 per GB-month in us-east-1 (AWS EBS pricing): 350 GiB is $35.00 -> $28.00.
const ANSWER: S['WhatIfRead'] = {
  window_start: '2026-11-21T05:00:00Z',
  window_end: '2026-11-22T05:00:00Z',
  ceilings: [
    {
      entity_kind: 'volume', entity_id: 'vol-gp2', dimension: 'iops', unit: 'IOPS', ceiling: 1050, ceiling_after: 3000,
      p99: 1433.8, headroom_pct: -36.6, headroom_after_pct: 52.2, instance_limit: null, instance_limit_after: null,
      volumes_limit: null, volumes_limit_after: null, binding: null, binding_after: null,
      in_force: {
        id: 'data_baseline_iops', label: 'gp2 baseline IOPS', value: 1050, unit: 'IOPS', kind: 'sustained',
        valid_from: null, valid_to: null, source: 'gp2 350 GiB: AWS: General Purpose SSD volumes (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)',
      },
      in_force_after: {
        id: 'data_max_iops', label: 'gp3 provisioned IOPS', value: 3000, unit: 'IOPS', kind: 'provisioned',
        valid_from: null, valid_to: null, source: 'gp3 350 GiB: AWS: General Purpose SSD volumes (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)',
      },
    },
    // Its data volume raised to 300 MiB/s: the instance's own 298 MiB/s binds first, so the p99 of 125 MiB/s
    // uses 41.9% of what the volume gets (the figure its finding predicts, 100 x (1 - 125 / 298.02) = 58.06 headroom).
    {
      entity_kind: 'volume', entity_id: 'vol-data', dimension: 'throughput', unit: 'MiB/s', ceiling: 125,
      ceiling_after: 300, p99: 125, headroom_pct: 0, headroom_after_pct: 58.06, instance_limit: 298.02,
      instance_limit_after: 298.02, volumes_limit: null, volumes_limit_after: null, binding: null, binding_after: null,
      in_force: {
        id: 'data_max_throughput', label: 'gp3 provisioned throughput', value: 125, unit: 'MiB/s', kind: 'provisioned',
        valid_from: null, valid_to: null, source: 'gp3 500 GiB: AWS: General Purpose SSD volumes (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)',
      },
      in_force_after: {
        id: 'data_max_throughput', label: 'gp3 provisioned throughput', value: 300, unit: 'MiB/s', kind: 'provisioned',
        valid_from: null, valid_to: null, source: 'gp3 500 GiB: AWS: General Purpose SSD volumes (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)',
      },
    },
    // The m6i.2xlarge beside it: its own EBS limit is 312.5 MB/s = 298 MiB/s (AWS: 2,500 Mbps / 8); its two gp3
    // volumes give 125 + 125 = 250 MiB/s, the smaller, in force; a data volume at 300 MiB/s makes them 425 MiB/s.
    {
      entity_kind: 'instance', entity_id: 'i-m6i', dimension: 'throughput', unit: 'MiB/s', ceiling: 250,
      ceiling_after: 298.02, p99: 240, headroom_pct: 4, headroom_after_pct: 19.5, instance_limit: 298.02,
      instance_limit_after: 298.02, volumes_limit: 250, volumes_limit_after: 425, binding: 'volumes',
      binding_after: 'instance',
      in_force: {
        id: 'volumes_sum_throughput', label: "attached volumes' sustained throughput (sum of 2 volumes)", value: 250,
        unit: 'MiB/s', kind: 'provisioned', valid_from: null, valid_to: null,
        source: 'AWS: Amazon EBS-optimized instances (https://docs.aws.amazon.com/ebs/latest/userguide/ebs-optimized.html); gp3 500 GiB: AWS: General Purpose SSD volumes (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)',
      },
      in_force_after: {
        id: 'instance_max_throughput', label: 'm6i.2xlarge EBS throughput', value: 298.02, unit: 'MiB/s',
        kind: 'sustained', valid_from: null, valid_to: null,
        source: 'm6i.2xlarge: AWS: Amazon EBS-optimized instances (https://docs.aws.amazon.com/ebs/latest/userguide/ebs-optimized.html)',
      },
    },
  ],
  resolved: [
    { dedup_key: 'gp2-burst-depletion/x/volume:vol-gp2', rule: 'gp2-burst-depletion', severity: 'critical', title: 'vol-gp2 (gp2 350 GiB): BurstBalance fell to 0%', finding_id: GP2_FINDING },
  ],
  remaining: [
    { dedup_key: 'block-cache-size/x', rule: 'block-cache-size', severity: 'warning', title: 'block cache larger than the hot set', finding_id: null },
  ],
  new: [],
  projections: [
    {
      entity_kind: 'volume', entity_id: 'vol-gp2', metric: 'iops', unit: 'IOPS', ceiling: 1050, ceiling_after: 3000,
      before: { days: 0, days_low: 0, days_high: 0 }, after: { days: 40, days_low: 34.75, days_high: 46.75 },
      level_now: 1100, horizon_days: 90, interval: 0.9, fitted_at: '2026-11-22T05:41:00Z',
    },
  ],
  cost: { before_usd: 1235, after_usd: 1228, delta_usd: -7, unpriced: ['instance i-9 (x9z.mystery)'] },
};

const GP2_TO_GP3 = [{ target: 'aws' as const, key: 'volume.type', entity: { kind: 'volume' as const, id: 'vol-gp2', volume_id: 'vol-gp2' }, proposed: 'gp3' }];

function recordWhatIf(answer: (changes: S['Change'][]) => Response) {
  const sent: S['Change'][][] = [];
  server.use(
    http.post(apiUrl(`/clusters/${CLUSTER_ID}/what-if`), async ({ request }) => {
      const body = (await request.json()) as S['WhatIfRequest'];
      sent.push(body.changes);
      return answer(body.changes);
    }),
  );
  return sent;
}

describe('cluster what-if', () => {
  it('tries the changes a link brings and shows ceilings, findings, projections and cost before and after', async () => {
    server.use(...clusterHandlers());
    const sent = recordWhatIf(() => HttpResponse.json(ANSWER));
    renderRoutes(routes, whatIfHref(CLUSTER_ID, GP2_TO_GP3));

    expect(await screen.findByRole('link', { name: 'What-if' })).toHaveAttribute('aria-current', 'page');
    const row = await screen.findByRole('group', { name: '1. Volume' });
    expect(within(row).getByLabelText('Volume')).toHaveValue('vol-gp2');
    expect(within(row).getByLabelText('Type')).toHaveValue('gp3');
    expect(within(row).getByLabelText('Size (GiB)')).toHaveValue('350');

    const cost = await screen.findByRole('region', { name: 'Monthly cost' });
    expect(sent).toEqual([[{ target: 'aws', key: 'volume.type', entity: { kind: 'volume', id: 'vol-gp2', volume_id: 'vol-gp2' }, proposed: 'gp3' }]]);
    expect(cost).toHaveTextContent('Before$1,235.00');
    expect(cost).toHaveTextContent('After$1,228.00');
    expect(cost).toHaveTextContent('Change−$7.00 a month');
    expect(within(cost).getByRole('list', { name: 'Not priced' })).toHaveTextContent('instance i-9 (x9z.mystery)');

    const ceilings = screen.getByRole('list', { name: 'Ceilings that move' });
    expect(ceilings).toHaveTextContent('Volume vol-gp2 IOPS');
    expect(ceilings).toHaveTextContent('1,050 IOPS → 3,000 IOPS');
    expect(ceilings).toHaveTextContent("the last day's p99 uses 137% of the ceiling (37% over) → 47.8% of the ceiling: p99 of 1,434 IOPS");
    // a volume under an instance whose own limit binds first: its use is of the smaller, named
    expect(ceilings).toHaveTextContent("its instance's own EBS limit: 298 MiB/s → 298 MiB/s (its I/O meets the smaller first)");
    expect(ceilings).toHaveTextContent("the last day's p99 uses 100% of the ceiling → 41.9% of the ceiling: p99 of 125 MiB/s");
    // an instance's two ceilings each under its own name: 250 MiB/s is its volumes' sum, never its EBS limit
    const parts = within(ceilings).getByRole('list', { name: 'The two ceilings of i-m6i' });
    expect(parts).toHaveTextContent("the instance's own EBS limit: 298 MiB/s → 298 MiB/s");
    expect(parts).toHaveTextContent('its volumes together: 250 MiB/s → 425 MiB/s');
    expect(parts).toHaveTextContent("in force: its volumes together → the instance's own limit");
    expect(ceilings).toHaveTextContent('Instance EBS i-m6i throughputin force (the smaller): 250 MiB/s → 298 MiB/s');
    // each ceiling says what kind it is and where it comes from, as the API gives it, its link clickable
    const gp2From = within(ceilings).getByRole('list', { name: 'Where the ceilings of vol-gp2 come from' });
    expect(gp2From).toHaveTextContent('before: gp2 baseline IOPS (sustained)');
    expect(gp2From).toHaveTextContent('after: gp3 provisioned IOPS (provisioned)');
    expect(within(gp2From).getAllByRole('link', { name: 'https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html' })).toHaveLength(2);
    const m6iFrom = within(ceilings).getByRole('list', { name: 'Where the ceilings of i-m6i come from' });
    expect(m6iFrom).toHaveTextContent("before: attached volumes' sustained throughput (sum of 2 volumes) (provisioned)");
    expect(within(m6iFrom).getAllByRole('link', { name: 'https://docs.aws.amazon.com/ebs/latest/userguide/ebs-optimized.html' })).toHaveLength(2);

    const resolved = screen.getByRole('region', { name: 'Resolved (1)' });
    expect(within(resolved).getByRole('link', { name: /BurstBalance fell to 0%/ })).toHaveAttribute(
      'href',
      `/clusters/${CLUSTER_ID}/findings/${GP2_FINDING}`,
    );
    const remaining = screen.getByRole('region', { name: 'Remaining (1)' });
    expect(within(remaining).queryByRole('link')).toBeNull(); // not recorded: no page to link to
    expect(screen.getByRole('region', { name: 'New (0)' })).toHaveTextContent('no new finding');

    const projections = screen.getByRole('list', { name: 'Projections that move' });
    expect(projections).toHaveTextContent('ceiling reached: reached → in 40 days (35–47)');
  });

  it('recomputes as the form changes, checks fields as the API does, and sends nothing while one is wrong', async () => {
    server.use(...clusterHandlers());
    const sent = recordWhatIf(() => HttpResponse.json(ANSWER));
    const { user } = renderRoutes(routes, `/clusters/${CLUSTER_ID}/what-if`);
    await user.click(await screen.findByRole('button', { name: 'Add a TiKV key' }));
    const row = screen.getByRole('group', { name: '1. TiKV key' });
    await user.type(within(row).getByLabelText('TiKV key'), 'blockcache');
    await user.type(within(row).getByLabelText('Value'), '2');
    expect(within(row).getByLabelText('TiKV key')).toHaveAccessibleDescription(/A dotted tikv\.toml key/);
    expect(screen.getByRole('button', { name: 'Try' })).toBeDisabled();

    await user.selectOptions(within(row).getByLabelText('Node'), '10.0.1.14:20180');
    await user.clear(within(row).getByLabelText('TiKV key'));
    await user.type(within(row).getByLabelText('TiKV key'), 'raftstore.store-io-pool-size');
    // no click: the answer follows the form once it rests (a slow machine may also try a prefix of the key)
    await screen.findByRole('region', { name: 'Monthly cost' });
    await screen.findByText('1 change tried.');
    expect(sent.at(-1)).toEqual([
      {
        target: 'tikv',
        key: 'raftstore.store-io-pool-size',
        proposed: 2,
        entity: { kind: 'node', id: '10.0.1.14:20160', node: '10.0.1.14:20160', status_address: '10.0.1.14:20180' },
      },
    ]);
    const tried = sent.length;

    // a volume row: a size that is not a whole number is refused here; IOPS do not apply to gp2
    await user.click(screen.getByRole('button', { name: 'Add a volume change' }));
    const vol = screen.getByRole('group', { name: '2. Volume' });
    await user.selectOptions(within(vol).getByLabelText('Volume'), 'vol-gp2');
    expect(within(vol).getByLabelText('IOPS')).toBeDisabled();
    await user.clear(within(vol).getByLabelText('Size (GiB)'));
    await user.type(within(vol).getByLabelText('Size (GiB)'), '12.5');
    expect(within(vol).getByLabelText('Size (GiB)')).toHaveAccessibleDescription('A whole number of GiB, at least 1.');
    expect(screen.getByRole('status')).toHaveTextContent('Fix the marked fields');
    expect(sent).toHaveLength(tried);
  });

  /** Open the GP2_TO_GP3 what-if, add an instance change of type x9z.huge and press Try. */
  async function tryAnUnknownInstanceType() {
    const { user } = renderRoutes(routes, whatIfHref(CLUSTER_ID, GP2_TO_GP3));
    await screen.findByRole('region', { name: 'Monthly cost' });
    await user.click(screen.getByRole('button', { name: 'Add an instance change' }));
    const inst = screen.getByRole('group', { name: '2. Instance' });
    await user.clear(within(inst).getByLabelText('Instance type'));
    await user.type(within(inst).getByLabelText('Instance type'), 'x9z.huge');
    await user.click(screen.getByRole('button', { name: 'Try' }));
    return { user, inst };
  }

  it("shows the API's refusal on the row of the change it names", async () => {
    server.use(...clusterHandlers());
    recordWhatIf((changes) =>
      changes.length > 1
        ? HttpResponse.json(
            apiError('invalid_input', 'Change 2: unknown instance type x9z.huge', { field: 'changes[1]' }),
            { status: 422 },
          )
        : HttpResponse.json(ANSWER),
    );
    const { inst } = await tryAnUnknownInstanceType();
    expect(await within(inst).findByRole('alert')).toHaveTextContent('unknown instance type x9z.huge');
    expect(within(screen.getByRole('group', { name: '1. Volume' })).queryByRole('alert')).toBeNull();
  });

  it('drops an earlier refusal as soon as the changes it answered are edited', async () => {
    server.use(...clusterHandlers());
    recordWhatIf((changes) =>
      changes.some((c) => c.key === 'instance.type' && c.proposed === 'x9z.huge')
        ? HttpResponse.json(
            apiError('invalid_input', 'Change 2: unknown instance type x9z.huge', { field: 'changes[1]' }),
            { status: 422 },
          )
        : changes.some((c) => c.key === 'instance.type' && c.proposed === 'x9z.slow')
          ? HttpResponse.json(apiError('internal', 'The server failed while computing.'), { status: 500 })
          : HttpResponse.json(ANSWER),
    );
    const { user, inst } = await tryAnUnknownInstanceType();
    expect(await within(inst).findByRole('alert')).toHaveTextContent('unknown instance type x9z.huge');

    // one keystroke later the refusal no longer describes the form: it is gone before any new answer
    await user.type(within(inst).getByLabelText('Instance type'), 'x');
    expect(within(inst).queryByRole('alert')).toBeNull();
    expect(screen.queryByRole('alert')).toBeNull();

    // a form-wide error (a 500) also goes when the input changes
    await user.clear(within(inst).getByLabelText('Instance type'));
    await user.type(within(inst).getByLabelText('Instance type'), 'x9z.slow');
    await user.click(screen.getByRole('button', { name: 'Try' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('The server failed while computing.');
    await user.type(within(inst).getByLabelText('Instance type'), 'e');
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it("links a finding's option to the what-if page with its changes", async () => {
    server.use(...clusterHandlers());
    renderRoutes(routes, `/clusters/${CLUSTER_ID}/findings/${GP2_FINDING}`);
    const link = await screen.findByRole('link', { name: 'Try this in what-if: gp2 grown to 638 GiB' });
    const url = new URL(link.getAttribute('href') ?? '', window.location.origin);
    expect(url.pathname).toBe(`/clusters/${CLUSTER_ID}/what-if`);
    expect(changesFromSearch(url.searchParams)).toMatchObject([{ target: 'aws', key: 'volume.size', proposed: 638 }]);
  });
});
