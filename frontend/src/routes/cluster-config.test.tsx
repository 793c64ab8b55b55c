import { screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { routes } from '@/router';
import { apiError, renderRoutes } from '@/test/render';
import { apiUrl, server } from '@/test/server';
import {
  CACHE_FINDING,
  CLUSTER_ID,
  clusterHandlers,
  GP2_FINDING,
  NODE_B,
  PATCH,
  VIEWER_SESSION,
} from '@/test/cluster-fixtures';

const PATH = `/clusters/${CLUSTER_ID}/config`;

describe('cluster config', () => {
  it("shows a node's live config as dotted keys", async () => {
    server.use(...clusterHandlers());
    renderRoutes(routes, PATH);
    const table = await screen.findByRole('table', { name: 'Live config of 10.0.1.13:20160' });
    const row = within(table).getByRole('row', { name: /storage\.block-cache\.capacity/ });
    expect(within(row).getAllByRole('cell').map((c) => c.textContent)).toEqual(['14745MiB', 'unchanged']);
    expect(within(table).getByRole('row', { name: /rocksdb\.titan\.enabled/ })).toHaveTextContent('true');
  });

  it('says when the config was captured with its zone once', async () => {
    server.use(...clusterHandlers());
    renderRoutes(routes, PATH);
    const captured = await screen.findByText(/captured/);
    expect(captured.textContent).toMatch(/captured \d{1,2} \w{3} \d{4}, \d{2}:\d{2} UTC · /);
    expect(captured.textContent).not.toMatch(/UTC\s+UTC/);
  });

  it('uploads a tikv.toml: a wrong value is named with its line, an unknown key is a warning', async () => {
    const sent: unknown[] = [];
    server.use(...clusterHandlers());
    server.use(
      http.post(apiUrl(`/clusters/${CLUSTER_ID}/nodes/:nodeId/config`), async ({ request }) => {
        const body = (await request.json()) as { content: string };
        sent.push(body);
        if (body.content.includes('lots')) {
          return HttpResponse.json(
            {
              error: {
                code: 'config_value_error',
                message: "content: storage.block-cache.capacity (line 2): 'lots' is not a valid value; and 1 more.",
                details: [
                  { field: 'content', key: 'storage.block-cache.capacity', line: 2, message: "'lots' is not a valid value" },
                  { field: 'content', key: 'rocksdb.max-background-jobs', line: 4, message: '-3 is not a valid value' },
                ],
              },
            },
            { status: 422 },
          );
        }
        return HttpResponse.json(
          {
            id: 'c0000000-0000-4000-8000-000000000002',
            node_id: 'n',
            version: 2,
            source: 'upload',
            config: { rocksdb: { 'future-knob': 3 } },
            raw_text: body.content,
            content_sha256: 'ab'.repeat(32),
            captured_at: '2026-11-22T06:00:00Z',
            created: true,
            warnings: ["TiKV's config template has no key rocksdb.future-knob: stored as written"],
          },
          { status: 201 },
        );
      }),
    );
    const { user } = renderRoutes(routes, PATH);
    await screen.findByRole('table', { name: 'Live config of 10.0.1.13:20160' });
    await user.click(screen.getByText('Upload a config for 10.0.1.13:20160'));
    const form = screen.getByRole('form', { name: 'Upload a config for 10.0.1.13:20160' });
    await user.type(within(form).getByLabelText('Content'), 'x = "lots"');
    await user.click(within(form).getByRole('button', { name: 'Check and store' }));
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('storage.block-cache.capacity (line 2)');
    expect(within(alert).getAllByRole('listitem').map((li) => li.textContent)).toEqual([
      "line 2: 'lots' is not a valid value",
      'line 4: -3 is not a valid value',
    ]);
    await user.clear(within(form).getByLabelText('Content'));
    await user.type(within(form).getByLabelText('Content'), 'future-knob = 3');
    await user.click(within(form).getByRole('button', { name: 'Check and store' }));
    expect(await screen.findByText('Stored as version 2.')).toBeInTheDocument();
    expect(screen.getByText(/no key rocksdb\.future-knob/)).toBeInTheDocument();
    expect(sent).toEqual([
      { format: 'toml', content: 'x = "lots"' },
      { format: 'toml', content: 'future-knob = 3' },
    ]);
  });

  it('shows what selected findings would change on the node, then creates a patch and shows its diff', async () => {
    let body: unknown;
    server.use(...clusterHandlers());
    server.use(
      http.post(apiUrl(`/clusters/${CLUSTER_ID}/patches`), async ({ request }) => {
        body = await request.json();
        return HttpResponse.json(PATCH, { status: 201 });
      }),
    );
    const { user } = renderRoutes(routes, PATH);
    await screen.findByRole('table', { name: 'Live config of 10.0.1.13:20160' });
    // The cache finding changes 10.0.1.14 only: pick that node.
    await user.selectOptions(screen.getByLabelText('Node'), NODE_B);
    await screen.findByRole('table', { name: 'Live config of 10.0.1.14:20160' });

    await user.click(await screen.findByRole('checkbox', { name: /shrink the block cache/ }));
    expect(await screen.findByText('1 tikv.toml change')).toBeInTheDocument();
    const table = screen.getByRole('table', { name: 'Live config of 10.0.1.14:20160' });
    const row = within(table).getByRole('row', { name: /storage\.block-cache\.capacity/ });
    expect(await within(row).findByRole('cell', { name: '4GiB' })).toBeInTheDocument();

    await user.click(screen.getByRole('checkbox', { name: 'Only keys that would change' }));
    expect(within(screen.getByRole('table', { name: 'Live config of 10.0.1.14:20160' })).getAllByRole('row')).toHaveLength(2);

    await user.click(screen.getByRole('button', { name: 'Create patch' }));
    expect(await screen.findByRole('heading', { name: 'Patch created' })).toBeInTheDocument();
    expect(body).toEqual({ finding_ids: [CACHE_FINDING] });
    const diff = await screen.findByLabelText('Diff of tikv.toml on 10.0.1.14:20160');
    expect(diff).toHaveTextContent('+capacity = "4GiB"');
    expect(screen.getByRole('button', { name: /^Download toml/ })).toBeInTheDocument();
  });

  it('lets the user choose among a finding\'s options, with what each costs, and sends the choice', async () => {
    // Regression: a finding with several options silently gave the patch its first. The gp2 finding offers gp3
    // (its recommendation) and a larger gp2 (+$28.80/month).
    let body: unknown;
    server.use(...clusterHandlers());
    server.use(
      http.post(apiUrl(`/clusters/${CLUSTER_ID}/patches`), async ({ request }) => {
        body = await request.json();
        return HttpResponse.json(PATCH, { status: 201 });
      }),
    );
    const { user } = renderRoutes(routes, PATH);
    await user.click(await screen.findByRole('checkbox', { name: /BurstBalance fell to 0%/ }));
    const choice = await screen.findByRole('group', { name: /^Fix for vol-043ed06aaced3aa8a/ });
    const radios = within(choice).getAllByRole('radio');
    expect(radios.map((r) => r.closest('label')?.textContent)).toEqual([
      'gp3 350 GiB, 3,000 IOPS, 250 MiB/s · online · sustained IOPS 1,050 -> 3,000',
      'gp2 grown to 638 GiB · online · sustained IOPS 1,050 IOPS -> 1,914 IOPS; +$28.80/month',
    ]);
    expect(radios[0]).toBeChecked();
    expect(await screen.findByText('0 tikv.toml changes and 2 AWS changes')).toBeInTheDocument();
    await user.click(radios[1] as HTMLElement);
    expect(await screen.findByText('0 tikv.toml changes and 1 AWS change')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Create patch' }));
    expect(await screen.findByRole('heading', { name: 'Patch created' })).toBeInTheDocument();
    expect(body).toEqual({ finding_ids: [GP2_FINDING], options: { [GP2_FINDING]: 1 } });
  });

  it('shows the choices and enables "Create patch" once every selected finding is read, not one by one', async () => {
    // Regression: each finding's options appeared as its answer arrived, pushing "Create patch" down under a
    // pointer on its way to it (a click meant for it landed elsewhere; the crawl's click sent nothing).
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    server.use(...clusterHandlers());
    const { user } = renderRoutes(routes, PATH);
    await user.click(await screen.findByRole('checkbox', { name: /BurstBalance fell to 0%/ }));
    await screen.findByRole('group', { name: /^Fix for vol-043ed06aaced3aa8a/ });
    // a second finding whose answer is held: the first one's choices wait with it, and so does the button
    server.use(
      http.get(apiUrl(`/findings/${CACHE_FINDING}`), async () => {
        await held;
        return undefined;
      }),
    );
    await user.click(screen.getByRole('checkbox', { name: /block cache/i }));
    expect(await screen.findByText('Reading the selected findings…')).toBeInTheDocument();
    expect(screen.queryByRole('group', { name: /^Fix for/ })).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Create patch' })).toBeDisabled();
    release();
    expect(await screen.findByRole('group', { name: /^Fix for vol-043ed06aaced3aa8a/ })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Create patch' })).toBeEnabled();
  });

  it('shows the API error when the patch cannot be made', async () => {
    server.use(...clusterHandlers());
    server.use(
      http.post(apiUrl(`/clusters/${CLUSTER_ID}/patches`), () =>
        HttpResponse.json(apiError('conflict', 'No config has been captured for this cluster yet.'), { status: 409 }),
      ),
    );
    const { user } = renderRoutes(routes, PATH);
    await user.click(await screen.findByRole('checkbox', { name: /shrink the block cache/ }));
    await user.click(screen.getByRole('button', { name: 'Create patch' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('No config has been captured for this cluster yet.');
  });

  it('keeps "Create patch" disabled for a viewer', async () => {
    server.use(...clusterHandlers({ session: VIEWER_SESSION }));
    const { user } = renderRoutes(routes, PATH);
    await user.click(await screen.findByRole('checkbox', { name: /shrink the block cache/ }));
    const button = screen.getByRole('button', { name: 'Create patch' });
    expect(button).toBeDisabled();
    expect(button).toHaveAttribute('title', 'Only admins can create patches.');
  });

  it('says so when there are no nodes, and when a config fails to load', async () => {
    server.use(...clusterHandlers());
    server.use(http.get(apiUrl(`/clusters/${CLUSTER_ID}/nodes`), () => HttpResponse.json({ items: [], total: 0 })));
    const first = renderRoutes(routes, PATH);
    expect(await screen.findByRole('region', { name: 'No nodes yet' })).toBeInTheDocument();
    first.unmount();

    server.resetHandlers();
    server.use(...clusterHandlers());
    server.use(
      http.get(apiUrl(`/clusters/${CLUSTER_ID}/nodes/:nodeId/config`), () =>
        HttpResponse.json(apiError('not_found', 'No config stored for this node.'), { status: 404 }),
      ),
    );
    renderRoutes(routes, PATH);
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent("Could not load this node's config");
    expect(alert).toHaveTextContent('No config stored for this node.');
  });
});
