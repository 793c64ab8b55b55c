import { screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { routes } from '@/router';
import { apiError, renderRoutes, SESSION } from '@/test/render';
import { apiUrl, server } from '@/test/server';
import { CLUSTER_ID, clusterHandlers, PATCH, PATCH_ID, TOML, VIEWER_SESSION } from '@/test/cluster-fixtures';

describe('cluster patches list', () => {
  it('lists patches with their findings, changes and whether applied', async () => {
    server.use(...clusterHandlers());
    renderRoutes(routes, `/clusters/${CLUSTER_ID}/patches`);
    const table = await screen.findByRole('table', { name: 'Patches' });
    const row = within(table).getByRole('row', { name: /Patch of 22 Nov 2026/ });
    expect(within(row).getAllByRole('cell').map((c) => c.textContent)).toEqual(['1', '1', 'Not yet']);
    expect(within(row).getByRole('link')).toHaveAttribute('href', `/clusters/${CLUSTER_ID}/patches/${PATCH_ID}`);
  });

  it('says how to make one when there is none, and shows load errors', async () => {
    server.use(...clusterHandlers());
    server.use(http.get(apiUrl(`/clusters/${CLUSTER_ID}/patches`), () => HttpResponse.json({ items: [], total: 0 })));
    const first = renderRoutes(routes, `/clusters/${CLUSTER_ID}/patches`);
    const empty = await screen.findByRole('region', { name: 'No patches yet' });
    expect(within(empty).getByRole('link', { name: 'Create one from the Config tab' })).toHaveAttribute(
      'href',
      `/clusters/${CLUSTER_ID}/config`,
    );
    first.unmount();

    server.use(
      http.get(apiUrl(`/clusters/${CLUSTER_ID}/patches`), () =>
        HttpResponse.json(apiError('unavailable', 'The database is not reachable.'), { status: 503 }),
      ),
    );
    renderRoutes(routes, `/clusters/${CLUSTER_ID}/patches`);
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load patches');
    expect(alert).toHaveTextContent('The database is not reachable.');
  });
});

describe('patch detail', () => {
  const PATH = `/clusters/${CLUSTER_ID}/patches/${PATCH_ID}`;

  it('shows who made it and when, its changes, the diff and the notes', async () => {
    server.use(...clusterHandlers());
    renderRoutes(routes, PATH);
    expect(await screen.findByRole('heading', { name: /^Patch of 22 Nov 2026/, level: 2 })).toBeInTheDocument();
    expect(await screen.findByText(/^22 Nov 2026, 05:10 UTC by Ada Lovelace$/)).toBeInTheDocument();
    expect(screen.getByText('Not applied yet')).toBeInTheDocument();
    const changes = screen.getByRole('table', { name: 'Changes in this patch' });
    expect(within(changes).getByRole('row', { name: /storage\.block-cache\.capacity/ })).toHaveTextContent(
      /10\.0\.1\.14:20160.*14745MiB.*4GiB/,
    );
    const diff = await screen.findByLabelText('Diff of tikv.toml on 10.0.1.14:20160');
    expect(diff).toHaveTextContent('-capacity = "14745MiB"');
    expect(diff).toHaveTextContent('+capacity = "4GiB"');
    // the diff's own notes (X-Headroom-Notes) are shown next to it, before anyone applies it
    expect(screen.getByRole('list', { name: 'Before you apply this file' })).toHaveTextContent(
      'raft-engine.dir: this file sets [raft-engine] enable = false',
    );
    expect(screen.getByRole('region', { name: 'Notes' })).toHaveTextContent('From 1 finding(s): block-cache-size.');
    const downloads = screen.getByRole('group', { name: 'Downloads' });
    expect(within(downloads).getAllByRole('button').map((b) => b.textContent)).toEqual(
      PATCH.formats.map((f) => (f === 'configs' ? 'Download all configs (zip)' : `Download ${f}`)),
    );
  });

  it('downloads the toml under the name the server gives it', async () => {
    const blobs: Blob[] = [];
    const createObjectURL = vi.fn((blob: Blob) => {
      blobs.push(blob);
      return 'blob:patch';
    });
    Object.assign(URL, { createObjectURL, revokeObjectURL: vi.fn() });
    const names: string[] = [];
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      names.push(this.download);
    });
    server.use(...clusterHandlers());
    const { user } = renderRoutes(routes, PATH);
    await user.click(await screen.findByRole('button', { name: /^Download toml/ }));
    await vi.waitFor(() => expect(names).toEqual(['demo-prod-demo-tikv-patch.toml']));
    expect(click).toHaveBeenCalledTimes(1);
    // jsdom's Blob has no text(): read it the old way.
    const text = await new Promise<string>((resolve) => {
      const reader = new FileReader();
      reader.onload = () => resolve(String(reader.result));
      reader.readAsText(blobs[0] as Blob);
    });
    expect(text).toBe(TOML);
  });

  it('shows the error when a download fails', async () => {
    server.use(...clusterHandlers());
    server.use(
      http.get(apiUrl(`/clusters/${CLUSTER_ID}/patches/${PATCH_ID}`), ({ request }) => {
        if (new URL(request.url).searchParams.get('format') === 'sql') {
          return HttpResponse.json(apiError('validation_error', 'format: no SQL for AWS changes'), { status: 422 });
        }
      }),
    );
    const { user } = renderRoutes(routes, PATH);
    await user.click(await screen.findByRole('button', { name: /^Download sql/ }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'Could not download the sql file: format: no SQL for AWS changes',
    );
  });

  it('downloads each format\'s rollback as a file of that format', async () => {
    const asked: { format: string | null; rollback: string | null }[] = [];
    const names: string[] = [];
    Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:patch'), revokeObjectURL: vi.fn() });
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      names.push(this.download);
    });
    server.use(...clusterHandlers());
    server.use(
      http.get(apiUrl(`/clusters/${CLUSTER_ID}/patches/${PATCH_ID}`), ({ request }) => {
        const params = new URL(request.url).searchParams;
        if (!params.get('format')) return;
        asked.push({ format: params.get('format'), rollback: params.get('rollback') });
        const name = `demo-prod-demo-rollback-set-config.sql`;
        return new HttpResponse('SET CONFIG tikv `a` = 1;', {
          headers: { 'Content-Disposition': `attachment; filename="${name}"`, 'Content-Type': 'application/sql' },
        });
      }),
    );
    const { user } = renderRoutes(routes, PATH);
    const downloads = await screen.findByRole('group', { name: 'Downloads' });
    expect(within(downloads).queryByRole('button', { name: /rollback/ })).toBeNull();
    await user.click(within(downloads).getByRole('checkbox', { name: /^Rollback/ }));
    await user.click(within(downloads).getByRole('button', { name: /^Download sql rollback/ }));
    // the diff shown on the page is the forward one; the button asked for the sql's undo
    await vi.waitFor(() => expect(asked.filter((a) => a.rollback !== null)).toEqual([{ format: 'sql', rollback: 'true' }]));
    await vi.waitFor(() => expect(names).toEqual(['demo-prod-demo-rollback-set-config.sql']));
  });

  it("offers a node picker for the rollback when the nodes ran different values, and a plain button when not", async () => {
    const asked: { format: string | null; node: string | null; rollback: string | null }[] = [];
    Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:patch'), revokeObjectURL: vi.fn() });
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => undefined);
    const change = PATCH.changes[0]!;
    const node15 = { kind: 'node' as const, id: '10.0.1.15:20160', node: '10.0.1.15:20160', status_address: '10.0.1.15:20180' };
    // 10.0.1.14 ran the 8GiB of its uploaded tikv.toml before the patch, 10.0.1.15 TiKV's default for its memory
    const differing = {
      ...PATCH,
      changes: [{ ...change, current: '8GiB' }, { ...change, entity: node15, current: '14745MiB' }],
      nodes: [...PATCH.nodes, { status_address: '10.0.1.15:20180', address: '10.0.1.15:20160', keys: [change.key], has_config: true }],
      formats: ['toml', 'tiup', 'operator', 'sql'] as (typeof PATCH)['formats'],
    };
    let patch = differing;
    server.use(...clusterHandlers());
    server.use(
      http.get(apiUrl(`/clusters/${CLUSTER_ID}/patches/${PATCH_ID}`), ({ request }) => {
        const params = new URL(request.url).searchParams;
        if (!params.get('format')) return HttpResponse.json(patch);
        asked.push({ format: params.get('format'), node: params.get('node'), rollback: params.get('rollback') });
        return new HttpResponse('x = 1', { headers: { 'Content-Disposition': 'attachment; filename="f.toml"' } });
      }),
    );
    const first = renderRoutes(routes, PATH);
    const downloads = await screen.findByRole('group', { name: 'Downloads' });
    // no picker for the forward patch: one value on every node
    expect(within(downloads).queryByRole('combobox', { name: /Rollback/ })).toBeNull();
    await first.user.click(within(downloads).getByRole('checkbox', { name: /^Rollback/ }));
    const picker = within(downloads).getByRole('combobox', { name: 'Rollback (toml, operator) for node' });
    expect(within(picker).getAllByRole('option').map((o) => o.textContent)).toEqual(['10.0.1.14:20160', '10.0.1.15:20160']);
    expect(picker).toHaveAccessibleDescription(/the tiup, sql and tikv-ctl rollbacks restore every node's own value/);
    await first.user.selectOptions(picker, '10.0.1.15:20160');
    await first.user.click(within(downloads).getByRole('button', { name: /^Download toml rollback for 10\.0\.1\.15:20160/ }));
    await first.user.click(within(downloads).getByRole('button', { name: /^Download operator rollback for 10\.0\.1\.15:20160/ }));
    // tiup and sql set each node's own value in one file: no node asked
    await first.user.click(within(downloads).getByRole('button', { name: /^Download sql rollback \(/ }));
    // (the page's own diff is the forward one: only the buttons ask for rollbacks)
    await vi.waitFor(() =>
      expect(asked.filter((a) => a.rollback !== null)).toEqual([
        { format: 'toml', node: '10.0.1.15:20180', rollback: 'true' },
        { format: 'operator', node: '10.0.1.15:20180', rollback: 'true' },
        { format: 'sql', node: null, rollback: 'true' },
      ]),
    );
    first.unmount();

    // the same old value on both nodes: the rollback is one plain button, no node asked
    patch = { ...differing, changes: [{ ...change, current: '14745MiB' }, { ...change, entity: node15, current: '14745MiB' }] };
    asked.length = 0;
    const second = renderRoutes(routes, PATH);
    const plain = await screen.findByRole('group', { name: 'Downloads' });
    await second.user.click(within(plain).getByRole('checkbox', { name: /^Rollback/ }));
    expect(within(plain).queryByRole('combobox', { name: /Rollback/ })).toBeNull();
    await second.user.click(within(plain).getByRole('button', { name: /^Download toml rollback \(/ }));
    await vi.waitFor(() =>
      expect(asked.filter((a) => a.rollback !== null)).toEqual([{ format: 'toml', node: null, rollback: 'true' }]),
    );
  });

  it('offers merged and diff only for the nodes the patch changes, one chosen at a time, and all in a zip', async () => {
    // Regression: merged/diff were downloaded for the base config's node even when the changes were on another.
    const TWO = {
      ...PATCH,
      nodes: [
        { status_address: '10.0.1.14:20180', address: '10.0.1.14:20160', keys: ['a'], has_config: true },
        { status_address: '10.0.1.15:20180', address: '10.0.1.15:20160', keys: ['a'], has_config: true },
      ],
    };
    const asked: { format: string | null; node: string | null }[] = [];
    Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:patch'), revokeObjectURL: vi.fn() });
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => undefined);
    server.use(...clusterHandlers());
    server.use(
      http.get(apiUrl(`/clusters/${CLUSTER_ID}/patches/${PATCH_ID}`), ({ request }) => {
        const params = new URL(request.url).searchParams;
        if (!params.get('format')) return HttpResponse.json(TWO);
        asked.push({ format: params.get('format'), node: params.get('node') });
        return new HttpResponse('x', { headers: { 'Content-Disposition': 'attachment; filename="f"' } });
      }),
    );
    const { user } = renderRoutes(routes, PATH);
    const downloads = await screen.findByRole('group', { name: 'Downloads' });
    const choice = within(downloads).getByLabelText('Merged and diff for node');
    expect(within(choice).getAllByRole('option').map((o) => o.textContent)).toEqual([
      '10.0.1.14:20160',
      '10.0.1.15:20160',
    ]);
    await user.selectOptions(choice, '10.0.1.15:20180');
    await user.click(within(downloads).getByRole('button', { name: /^Download merged for 10\.0\.1\.15:20160/ }));
    await user.click(within(downloads).getByRole('button', { name: /^Download all configs \(zip\) \(/ }));
    await vi.waitFor(() =>
      expect(asked.filter((a) => a.format !== 'diff')).toEqual([
        { format: 'merged', node: '10.0.1.15:20180' },
        { format: 'configs', node: null },
      ]),
    );
  });

  it("patches the user's own TiDB Operator manifest and says how to apply it", async () => {
    const sent: unknown[] = [];
    Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:patch'), revokeObjectURL: vi.fn() });
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => undefined);
    server.use(...clusterHandlers());
    server.use(
      http.get(apiUrl(`/clusters/${CLUSTER_ID}/patches/${PATCH_ID}`), ({ request }) => {
        if (!new URL(request.url).searchParams.get('format')) {
          return HttpResponse.json({ ...PATCH, formats: [...PATCH.formats, 'operator'] });
        }
      }),
      http.post(apiUrl(`/clusters/${CLUSTER_ID}/patches/${PATCH_ID}/operator`), async ({ request }) => {
        sent.push(await request.json());
        return new HttpResponse('[{"op": "add"}]', {
          headers: {
            'Content-Type': 'application/json-patch+json',
            'Content-Disposition': 'attachment; filename="basic-tikv-config.json"',
            'X-Headroom-Apply-Command': `kubectl patch tc basic --type json -p '[{"op":"add"}]'`,
          },
        });
      }),
    );
    const { user } = renderRoutes(routes, PATH);
    const form = await screen.findByRole('form', { name: 'Patch your TiDB Operator manifest' });
    await user.type(within(form).getByLabelText('Manifest'), 'kind: TidbCluster');
    await user.click(within(form).getByRole('button', { name: 'Download the patched manifest' }));
    expect(await within(form).findByRole('status')).toHaveTextContent(
      `Saved basic-tikv-config.json. Apply it with kubectl patch tc basic --type json -p '[{"op":"add"}]'`,
    );
    expect(sent).toEqual([{ manifest: 'kind: TidbCluster' }]);
  });

  it('patches the user\'s own TiUP topology and shows what it changed beyond the keys', async () => {
    const sent: unknown[] = [];
    Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:patch'), revokeObjectURL: vi.fn() });
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => undefined);
    server.use(...clusterHandlers());
    server.use(
      http.post(apiUrl(`/clusters/${CLUSTER_ID}/patches/${PATCH_ID}/tiup`), async ({ request }) => {
        sent.push(await request.json());
        return new HttpResponse('server_configs: {}\n', {
          headers: {
            'Content-Type': 'application/yaml',
            'Content-Disposition': 'attachment; filename="topology.yaml"',
            'X-Headroom-Notes': JSON.stringify(['10.0.1.14:20160 sets it in its own config: changed there too']),
            'X-Headroom-Apply-Command':
              'tiup cluster edit-config demo-prod --topology-file topology.yaml && tiup cluster reload demo-prod -R tikv',
          },
        });
      }),
    );
    const { user } = renderRoutes(routes, PATH);
    const form = await screen.findByRole('form', { name: 'Patch your TiUP topology' });
    await user.type(within(form).getByLabelText('Topology'), 'tikv_servers: none');
    await user.click(within(form).getByRole('button', { name: 'Download the patched topology' }));
    const status = await within(form).findByRole('status');
    expect(status).toHaveTextContent(
      'Saved topology.yaml. Apply it with tiup cluster edit-config demo-prod --topology-file topology.yaml && ' +
        'tiup cluster reload demo-prod -R tikv',
    );
    expect(within(status).getByRole('listitem')).toHaveTextContent(
      '10.0.1.14:20160 sets it in its own config: changed there too',
    );
    expect(sent).toEqual([{ topology: 'tikv_servers: none' }]);
  });

  it('marks the patch applied, recording who and when', async () => {
    server.use(...clusterHandlers());
    server.use(
      http.post(apiUrl(`/clusters/${CLUSTER_ID}/patches/${PATCH_ID}/applied`), () =>
        HttpResponse.json({ ...PATCH, applied_at: '2026-11-22T06:00:00Z', applied_by_user_id: SESSION.user.id }),
      ),
    );
    const { user } = renderRoutes(routes, PATH);
    await user.click(await screen.findByRole('button', { name: 'Mark applied' }));
    expect(await screen.findByText('Applied 22 Nov 2026, 06:00 UTC by Ada Lovelace')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Mark applied' })).not.toBeInTheDocument();
  });

  it('keeps "Mark applied" disabled for a viewer', async () => {
    server.use(...clusterHandlers({ session: VIEWER_SESSION }));
    renderRoutes(routes, PATH);
    expect(await screen.findByRole('button', { name: 'Mark applied' })).toBeDisabled();
  });
});
