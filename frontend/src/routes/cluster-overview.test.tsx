import { screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { routes } from '@/router';
import { apiError, renderRoutes } from '@/test/render';
import { apiUrl, server } from '@/test/server';
import {
  CACHE_FINDING,
  CACHE_SUMMARY,
  CLUSTER,
  CLUSTER_ID,
  clusterHandlers,
  GP2_FINDING,
  GP2_SUMMARY,
  NODES,
  PATCH_ID,
  VIEWER_SESSION,
} from '@/test/cluster-fixtures';
import { AWS_CONNECTION, HEALTH_FAILING, PROM_SOURCE } from './settings-fixtures';

describe('cluster overview', () => {
  it('shows the name, source badges, tabs, counts by severity, top findings by impact and the nodes', async () => {
    server.use(...clusterHandlers());
    renderRoutes(routes, `/clusters/${CLUSTER_ID}`);

    expect(await screen.findByRole('heading', { name: 'demo-prod (demo)', level: 1 })).toBeInTheDocument();
    const badges = await screen.findByRole('list', { name: 'Source health' });
    expect(await within(badges).findByText('Demo: demo fleet — simulated')).toBeInTheDocument();
    const tabs = screen.getByRole('navigation', { name: 'Cluster sections' });
    for (const tab of ['Overview', 'Findings', 'Metrics', 'Config', 'Patches']) {
      expect(within(tabs).getByRole('link', { name: tab })).toBeInTheDocument();
    }
    expect(within(tabs).getByRole('link', { name: 'Overview' })).toHaveAttribute('aria-current', 'page');
    expect(within(tabs).getByRole('link', { name: 'Metrics' })).toHaveAttribute('href', `/clusters/${CLUSTER_ID}/metrics`);

    const counts = await screen.findByRole('list', { name: 'Open findings by severity' });
    expect(within(counts).getAllByRole('listitem').map((li) => li.textContent)).toEqual([
      '1Critical',
      '1Warning',
      '0Info',
    ]);

    // The gp2 fix wins back 88.8 points of headroom, the cache fix 10: the gp2 finding ranks first.
    const top = await screen.findByRole('list', { name: 'Top findings by impact' });
    const links = within(top).getAllByRole('link');
    expect(links.map((a) => a.getAttribute('href'))).toEqual([
      `/clusters/${CLUSTER_ID}/findings/${GP2_FINDING}`,
      `/clusters/${CLUSTER_ID}/findings/${CACHE_FINDING}`,
    ]);
    expect(within(top).getByText('Impact: sustained IOPS 1,050 IOPS -> 3,000 IOPS with no bucket; −$2.00/month')).toBeInTheDocument();

    const nodes = await screen.findByRole('table', { name: 'TiKV nodes' });
    const row = within(nodes).getByRole('row', { name: /10\.0\.1\.13:20160/ });
    expect(await within(row).findByText(/m6i\.2xlarge/)).toBeInTheDocument();
    expect(within(row).getByText(/1,000 GiB · 3,000 IOPS · 125 MiB\/s/)).toBeInTheDocument();
    expect(within(row).getByRole('cell', { name: 'v8.5.1' })).toBeInTheDocument();
    // links out: the AWS console's page of the instance and each volume, the node's Grafana dashboard (new tabs)
    const console = within(row).getByRole('link', { name: 'AWS console of i-1 (opens in a new tab)' });
    expect(console).toHaveAttribute('href', expect.stringContaining('#InstanceDetails:instanceId=i-1'));
    expect(console).toHaveAttribute('rel', 'noopener noreferrer');
    expect(within(row).getByRole('link', { name: 'AWS console of vol-data13 (opens in a new tab)' })).toHaveAttribute(
      'href',
      expect.stringContaining('#VolumeDetails:volumeId=vol-data13'),
    );
    expect(within(row).getByRole('link', { name: 'Grafana dashboard of 10.0.1.13:20160 (opens in a new tab)' })).toHaveAttribute(
      'href',
      expect.stringContaining('/d/RDVQiEzZz?var-instance=10.0.1.13%3A20180'),
    );
    // m6i.2xlarge: 2,500 Mbps = 312.5 MB/s baseline, 10,000 Mbps = 1,250 MB/s burst (AWS "Amazon EBS-optimized
    // instances"), source in the tooltip. One unit for throughput everywhere, MiB/s, with AWS's MB/s
    // beside it: 312.5e6 / 1,048,576 = 298.0 MiB/s, 1,250e6 / 1,048,576 = 1,192.1 MiB/s (was "313 MB/s").
    const ebs = within(row).getByText(/EBS 298 MiB\/s \(AWS: 312.5 MB\/s\) · 12,000 IOPS/);
    expect(ebs).toHaveTextContent('EBS 298 MiB/s (AWS: 312.5 MB/s) · 12,000 IOPS (burst 1,192 MiB/s (AWS: 1,250 MB/s) · 40,000 IOPS)');
    expect(ebs).toHaveAttribute('title', expect.stringContaining('Source: AWS: Amazon EBS-optimized instances (https://'));
    // gp2 shows its baseline (3 IOPS/GiB x 350 GiB, docs/reference/gp2-burst.md#baseline-and-burst) as the API gives it, and that it bursts.
    const gp2Row = within(nodes).getByRole('row', { name: /10\.0\.1\.14:20160/ });
    expect(within(gp2Row).getByText(/350 GiB · 1,050 IOPS baseline · 250 MiB\/s/)).toBeInTheDocument();
    expect(within(gp2Row).getByText(/bursts/)).toBeInTheDocument();
  });

  it('ranks top findings by the list\'s impact order in one request, and shows a node without an instance', async () => {
    const requests: string[] = [];
    server.events.on('request:start', ({ request }) => {
      requests.push(new URL(request.url).pathname + new URL(request.url).search);
    });
    // the cache fix now wins back more headroom than the gp2 fix: the server's impact order puts it first
    const cacheFirst = { ...CACHE_SUMMARY, impact_score: 95, headroom_before_pct: -5, headroom_after_pct: 90, headroom_gain_pct: 95 };
    server.use(...clusterHandlers({ findings: [GP2_SUMMARY, cacheFirst] }));
    server.use(
      http.get(apiUrl(`/clusters/${CLUSTER_ID}/nodes`), () =>
        HttpResponse.json({ items: [{ ...NODES.items[0], instance: null, volumes: [] }], total: 1 }),
      ),
    );
    renderRoutes(routes, `/clusters/${CLUSTER_ID}`);

    const top = await screen.findByRole('list', { name: 'Top findings by impact' });
    expect(within(top).getAllByRole('link').map((a) => a.getAttribute('href'))).toEqual([
      `/clusters/${CLUSTER_ID}/findings/${CACHE_FINDING}`,
      `/clusters/${CLUSTER_ID}/findings/${GP2_FINDING}`,
    ]);
    // in words a person reads without a glossary: how much of its limit the peak uses, now and after the fix
    expect(within(top).getByText('At peak: 105% of the limit (5% over) now, 10% of the limit after the fix')).toBeInTheDocument();
    const nodes = await screen.findByRole('table', { name: 'TiKV nodes' });
    expect(within(nodes).getByText('Not mapped to an EC2 instance')).toBeInTheDocument();
    expect(within(nodes).getByText('None known')).toBeInTheDocument();
    // one findings list call (sort=impact) serves both the counts and the top findings; no detail requests, no
    // snapshot download
    expect(requests.filter((r) => r.startsWith(`/api/v1/clusters/${CLUSTER_ID}/findings`))).toEqual([
      `/api/v1/clusters/${CLUSTER_ID}/findings?status=open&status=acknowledged&sort=impact`,
    ]);
    expect(requests.some((r) => r.includes('/findings/') || r.includes('/snapshot'))).toBe(false);
    server.events.removeAllListeners();
  });

  it('says the first analysis is running, not zero findings, for a cluster never advised', async () => {
    server.use(...clusterHandlers({ findings: [] }));
    server.use(http.get(apiUrl(`/clusters/${CLUSTER_ID}`), () => HttpResponse.json({ ...CLUSTER, advised_at: null })));
    renderRoutes(routes, `/clusters/${CLUSTER_ID}`);

    expect(await screen.findByRole('heading', { name: 'demo-prod (demo)', level: 1 })).toBeInTheDocument();
    const card = screen.getByRole('region', { name: 'Open findings' });
    expect(within(card).getByText('First analysis running…').closest('[role="status"]')).toHaveTextContent(
      /its findings, savings and ceilings appear here when the analysis ends/,
    );
    expect(within(card).queryByRole('list', { name: 'Open findings by severity' })).not.toBeInTheDocument();
    expect(within(screen.getByRole('region', { name: 'Top findings by impact' })).getByText('First analysis running…')).toBeInTheDocument();
    expect(within(screen.getByRole('region', { name: 'Next ceilings' })).getByText('First analysis running…')).toBeInTheDocument();
    expect(screen.queryByText(/0Critical/)).not.toBeInTheDocument();
  });

  it('is opened from the clusters list', async () => {
    server.use(...clusterHandlers());
    server.use(http.get(apiUrl('/clusters'), () => HttpResponse.json({ items: [CLUSTER], total: 1 })));
    const { user, router } = renderRoutes(routes, '/clusters');
    const row = await screen.findByRole('row', { name: /demo-prod \(demo\)/ });
    await user.click(within(row).getByRole('link', { name: 'demo-prod (demo)' }));
    expect(await screen.findByRole('heading', { name: 'demo-prod (demo)', level: 1 })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe(`/clusters/${CLUSTER_ID}`);
  });

  it("badges the org's AWS connections and this cluster's Prometheus sources with their health", async () => {
    server.use(...clusterHandlers());
    server.use(
      http.get(apiUrl('/sources/aws'), () => HttpResponse.json([AWS_CONNECTION])),
      http.get(apiUrl('/sources/prometheus'), () =>
        HttpResponse.json([
          { ...PROM_SOURCE, cluster_id: CLUSTER_ID },
          // Another cluster's source is not this cluster's.
          { ...PROM_SOURCE, id: 'b0000000-0000-4000-8000-0000000000ff', name: 'other-prometheus', cluster_id: 'c0ffee00-0000-4000-8000-0000000000ff' },
        ]),
      ),
    );
    renderRoutes(routes, `/clusters/${CLUSTER_ID}`);
    const badges = await screen.findByRole('list', { name: 'Source health' });
    const failing = await within(badges).findByText('Prometheus: prod-prometheus — failing');
    expect(failing).toHaveAttribute('title', `Last error: ${HEALTH_FAILING.last_error}`);
    expect(within(badges).getByText('AWS: prod-account — healthy')).toBeInTheDocument();
    expect(within(badges).queryByText(/other-prometheus/)).not.toBeInTheDocument();
  });

  it('fetches the source lists on the overview only: the other tabs do not show the badges', async () => {
    const requests: string[] = [];
    server.events.on('request:start', ({ request }) => {
      requests.push(new URL(request.url).pathname);
    });
    server.use(...clusterHandlers());
    const { user } = renderRoutes(routes, `/clusters/${CLUSTER_ID}/findings`);
    expect(await screen.findByText('2 findings')).toBeInTheDocument();
    expect(screen.queryByRole('list', { name: 'Source health' })).not.toBeInTheDocument();
    expect(requests.filter((r) => r.startsWith('/api/v1/sources/'))).toEqual([]);

    await user.click(within(screen.getByRole('navigation', { name: 'Cluster sections' })).getByRole('link', { name: 'Overview' }));
    expect(await screen.findByRole('list', { name: 'Source health' })).toBeInTheDocument();
    await waitFor(() =>
      expect(requests.filter((r) => r.startsWith('/api/v1/sources/')).sort()).toEqual(['/api/v1/sources/aws', '/api/v1/sources/prometheus']),
    );
    server.events.removeAllListeners();
  });

  it('queues the advisor for an admin', async () => {
    let advised = 0;
    server.use(...clusterHandlers());
    server.use(
      http.post(apiUrl(`/clusters/${CLUSTER_ID}/advise`), () => {
        advised += 1;
        return HttpResponse.json({ task_id: 'inprocess:advice.run', job: 'advice.run' }, { status: 202 });
      }),
    );
    const { user } = renderRoutes(routes, `/clusters/${CLUSTER_ID}`);
    await user.click(await screen.findByRole('button', { name: 'Run advisor now' }));
    expect(
      await screen.findByText('The advisor is running; new findings appear here when it finishes.'),
    ).toBeInTheDocument();
    expect(advised).toBe(1);
  });

  it('disables "Run advisor now" for a viewer', async () => {
    server.use(...clusterHandlers({ session: VIEWER_SESSION }));
    renderRoutes(routes, `/clusters/${CLUSTER_ID}`);
    const button = await screen.findByRole('button', { name: 'Run advisor now' });
    expect(button).toBeDisabled();
    expect(button).toHaveAttribute('title', 'Only admins can run the advisor.');
  });

  it("says why an instance's EBS limits are unknown (the resolver's note)", async () => {
    const note =
      'zz9.mega: EBS limits unknown. The type is neither in Headroom\'s catalog (docs/reference/ec2-ebs-limits.md#limits-table) nor in this ' +
      "account's DescribeInstanceTypes answer (docs/reference/ec2-ebs-limits.md#describeinstancetypes), so no finding judges this instance's EBS bandwidth or IOPS.";
    const first = NODES.items[0]!;
    const odd = { ...first, instance: { ...first.instance!, instance_type: 'zz9.mega', ebs: null, ebs_note: note } };
    server.use(...clusterHandlers());
    server.use(http.get(apiUrl(`/clusters/${CLUSTER_ID}/nodes`), () => HttpResponse.json({ items: [odd], total: 1 })));
    renderRoutes(routes, `/clusters/${CLUSTER_ID}`);
    const nodes = await screen.findByRole('table', { name: 'TiKV nodes' });
    const unknown = within(nodes).getByText('EBS limits unknown: not judged by any finding');
    expect(unknown).toHaveAttribute('title', note);
  });

  it('says so when there are no findings and no nodes yet', async () => {
    server.use(...clusterHandlers({ findings: [] }));
    server.use(
      http.get(apiUrl(`/clusters/${CLUSTER_ID}/nodes`), () => HttpResponse.json({ items: [], total: 0 })),
    );
    renderRoutes(routes, `/clusters/${CLUSTER_ID}`);
    expect(await screen.findByRole('region', { name: 'No open findings' })).toBeInTheDocument();
    expect(await screen.findByRole('region', { name: 'No nodes yet' })).toBeInTheDocument();
  });

  it("shows the API's message when findings fail to load, and a not-found page for another org's cluster", async () => {
    server.use(...clusterHandlers());
    server.use(
      http.get(apiUrl(`/clusters/${CLUSTER_ID}/findings`), () =>
        HttpResponse.json(apiError('unavailable', 'The database is not reachable.'), { status: 503 }),
      ),
    );
    const first = renderRoutes(routes, `/clusters/${CLUSTER_ID}`);
    const alerts = await screen.findAllByRole('alert');
    expect(alerts[0]).toHaveTextContent('Could not load findings');
    expect(alerts[0]).toHaveTextContent('The database is not reachable.');
    first.unmount();

    const other = 'c0ffee00-0000-4000-8000-0000000000ff';
    server.use(
      http.get(apiUrl(`/clusters/${other}`), () =>
        HttpResponse.json(apiError('not_found', 'Cluster not found.'), { status: 404 }),
      ),
    );
    renderRoutes(routes, `/clusters/${other}`);
    expect(await screen.findByRole('region', { name: 'Cluster not found' })).toBeInTheDocument();
  });

  it('shows a loading state while the cluster loads', async () => {
    server.use(...clusterHandlers());
    server.use(http.get(apiUrl(`/clusters/${CLUSTER_ID}`), () => new Promise<never>(() => {})));
    renderRoutes(routes, `/clusters/${CLUSTER_ID}`);
    expect(await screen.findByText('Loading the cluster…')).toBeInTheDocument();
  });
});

describe('next ceilings', () => {
  it('lists the nearest projected ceilings with when, the interval, the method and the source', async () => {
    server.use(...clusterHandlers());
    renderRoutes(routes, `/clusters/${CLUSTER_ID}`);
    const table = await screen.findByRole('table', { name: 'Next ceilings' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getByRole('rowheader').textContent)).toEqual([
      'Volume vol-0hot IOPS',
      'Store 10.0.1.14:20160 disk space',
      'Instance EBS i-0a1b2c3d throughput',
    ]);
    expect(rows[0]).toHaveTextContent('reached');
    expect(rows[1]).toHaveTextContent('in 41 days (33–53)');
    expect(rows[1]).toHaveTextContent('trend, 28 days of history');
    expect(rows[2]).toHaveTextContent('not within 90 days');
    expect(within(rows[1] as HTMLElement).getByRole('link', { name: /pd-configuration-file/ })).toHaveAttribute(
      'href',
      'https://docs.pingcap.com/tidb/stable/pd-configuration-file',
    );
    expect(screen.getByText(/90 % intervals; fitted 22 Nov 2026, 05:41 UTC/)).toBeInTheDocument();
  });

  it('says when nothing has been projected yet', async () => {
    server.use(...clusterHandlers());
    const asked: string[] = [];
    server.use(
      http.get(apiUrl(`/clusters/${CLUSTER_ID}/projections`), ({ request }) => {
        asked.push(new URL(request.url).search);
        return HttpResponse.json({ items: [], total: 0, fitted_at: null });
      }),
    );
    renderRoutes(routes, `/clusters/${CLUSTER_ID}`);
    expect(await screen.findByRole('region', { name: 'No projections yet' })).toHaveTextContent('once a day');
    // the list shows days: it asks without the forecast paths
    expect(asked).toEqual(['?bands=false']);
  });

  it('lists the changes with who, the findings they addressed, the prediction and the measured effect', async () => {
    server.use(...clusterHandlers());
    renderRoutes(routes, `/clusters/${CLUSTER_ID}`);
    const ledger = await screen.findByRole('list', { name: 'Changes' });
    const entry = within(ledger).getAllByRole('listitem')[0]!;
    expect(entry).toHaveTextContent('Patch applied');
    expect(entry).toHaveTextContent('owner@example.com (marked the patch applied)');
    expect(within(entry).getByRole('list', { name: 'What changed' })).toHaveTextContent('volume.type on vol-gp2: gp2 → gp3');
    expect(entry).toHaveTextContent('Headroom saw it take effect: volume.type gp2 -> gp3 on vol-gp2');
    const finding = within(entry).getByRole('link', { name: 'vol-gp2 empties its burst bucket every afternoon' });
    expect(finding).toHaveAttribute('href', `/clusters/${CLUSTER_ID}/findings/${GP2_FINDING}`);
    expect(entry).toHaveTextContent('Predicted: IOPS ceiling 1,500 IOPS -> 3,000 IOPS; −$10.00/month');
    // the outcome of the fix: a badge, predicted against measured, and what was compared
    const outcome = within(entry).getByLabelText('Outcome');
    expect(outcome).toHaveTextContent(
      'Held Predicted 97% → 48.5%, measured 97% → 51% (peak use of the data volume IOPS ceiling on 10.0.1.11:20160)',
    );
    expect(within(outcome).getByText('Held')).toHaveClass('badge--ok');
    const expected = within(entry).getByRole('list', { name: 'Expected effect' });
    expect(expected).toHaveTextContent("vol-gp2 IOPS ceiling 1,500 IOPS → 3,000 IOPS (the day's p99 uses 107% of it (7% over) → 53.3% of it)");
    expect(expected).toHaveTextContent('Findings it was expected to clear: 1; monthly cost −$10.00');
    const measured = within(entry).getByRole('region', { name: 'Measured effect' });
    expect(within(measured).getByRole('row', { name: /10\.0\.1\.10:20160/ })).toHaveTextContent('100% → 56.2%');
    expect(entry).toHaveTextContent('the same hours one week earlier');
    const chart = await within(entry).findByRole('figure', {
      name: '10.0.1.10:20160 data volume IOPS: after the change, and the same hours a week earlier',
    });
    const legend = within(chart).getByRole('list', { name: /legend/ });
    expect(legend).toHaveTextContent('After the change');
    expect(legend).toHaveTextContent('A week earlier (shifted one week)');
    expect(legend).toHaveTextContent('after: IOPS ceiling 3,000');
    expect(legend).toHaveTextContent('before: IOPS ceiling 1,500');
  });

  it("shows a patch's own change and a config upload before it as its own entry, values in TiKV's units", async () => {
    const value = (key: string, before: unknown, after: unknown, beforeText: string, afterText: string) => ({
      key, before, after, before_text: beforeText, after_text: afterText,
    });
    const base = { predicted: null, predicted_note: null, effect: null, findings: [], entity_kind: 'node' as const };
    server.use(...clusterHandlers());
    server.use(
      http.get(apiUrl(`/clusters/${CLUSTER_ID}/changes`), () =>
        HttpResponse.json({
          days: 90,
          items: [
            {
              ...base, id: `patch:${PATCH_ID}`, kind: 'patch_applied', at: '2026-11-02T18:00:00Z',
              who: 'owner@example.com (marked the patch applied)', entity_id: '10.0.1.14:20160', patch_id: PATCH_ID,
              changes: [value('storage.block-cache.capacity', '8GiB', '4GiB', '8GiB', '4GiB')],
              seen_by_headroom: ["storage.block-cache.capacity 8GiB -> 4GiB on 10.0.1.14:20160, in the live config (TiKV's status port) at 2026-11-02 19:00 UTC"],
            },
            {
              ...base, id: 'config:1', kind: 'config_upload', at: '2026-11-02T17:57:00Z',
              who: 'a tikv.toml uploaded for the node', entity_id: '10.0.1.14:20160', patch_id: null, seen_by_headroom: [],
              changes: [
                value('storage.block-cache.capacity', '14745MiB', '8GiB', '14745MiB', '8GiB'),
                value('raft-engine.enable', true, null, 'true', 'not set (TiKV default true)'),
                value('readpool.unified.auto-adjust-pool-size', false, null, 'false', 'not set'),
              ],
            },
          ],
        }),
      ),
    );
    renderRoutes(routes, `/clusters/${CLUSTER_ID}`);
    const ledger = await screen.findByRole('list', { name: 'Changes' });
    const [patch, upload] = within(ledger).getAllByRole('listitem').filter((li) => li.classList.contains('ledger__entry'));
    expect(patch).toHaveTextContent('Patch applied');
    expect(within(patch!).getByRole('list', { name: 'What changed' })).toHaveTextContent(
      'storage.block-cache.capacity on 10.0.1.14:20160: 8GiB → 4GiB',
    );
    expect(patch).toHaveTextContent('Headroom saw it take effect: storage.block-cache.capacity 8GiB -> 4GiB on 10.0.1.14:20160');
    expect(patch).not.toHaveTextContent('raft-engine');
    expect(upload).toHaveTextContent('Config upload');
    expect(upload).toHaveTextContent('a tikv.toml uploaded for the node');
    expect(within(upload!).getByRole('list', { name: 'What changed' }).textContent).toBe(
      'storage.block-cache.capacity on 10.0.1.14:20160: 14745MiB → 8GiB' +
        'raft-engine.enable on 10.0.1.14:20160: true → not set (TiKV default true)' +
        'readpool.unified.auto-adjust-pool-size on 10.0.1.14:20160: false → not set',
    );
    expect(ledger.textContent).not.toMatch(/\b(None|True|False|null)\b/);
  });

  it('says what the ledger will hold when nothing changed yet', async () => {
    server.use(...clusterHandlers());
    server.use(http.get(apiUrl(`/clusters/${CLUSTER_ID}/changes`), () => HttpResponse.json({ items: [], days: 90 })));
    renderRoutes(routes, `/clusters/${CLUSTER_ID}`);
    expect(await screen.findByRole('region', { name: 'No changes yet' })).toHaveTextContent('Mark a patch applied');
  });
});
