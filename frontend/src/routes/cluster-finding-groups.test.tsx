import { screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import type { components } from '@/api/schema';
import { routes } from '@/router';
import { renderRoutes } from '@/test/render';
import { apiUrl, server } from '@/test/server';
import {
  CACHE_FINDING,
  CACHE_FINDING_DETAIL,
  CACHE_SUMMARY,
  CLUSTER_ID,
  clusterHandlers,
  GP2_FINDING,
  GP2_FINDING_DETAIL,
  GP2_SUMMARY,
} from '@/test/cluster-fixtures';

type S = components['schemas'];

// The seed article's case (PingCAP, "Best Practices for TiDB on AWS Cloud"): the demo's 350 GiB gp2 volume
// (baseline 3 x 350 = 1,050 IOPS, AWS gp2 docs) out of burst and "shrink the block cache" on the node that uses
// it are one cause; gp3 (3,000 IOPS, no bucket) resolves both: "resolves 2 of 2".
const GROUP: S['FindingGroup'] = {
  id: 'group-4bf735e8733d438b',
  cause: 'disk I/O of node 10.0.1.14:20160',
  primary: GP2_SUMMARY.dedup_key,
  fix: [GP2_SUMMARY.dedup_key],
  fix_label: 'gp3 350 GiB, 3,000 IOPS, 250 MiB/s',
  members: [GP2_SUMMARY.dedup_key, CACHE_SUMMARY.dedup_key],
  related: [CACHE_SUMMARY.dedup_key],
  resolves: [GP2_SUMMARY.dedup_key, CACHE_SUMMARY.dedup_key],
  remaining: [],
  measured: true,
  summary: 'Primary fix: gp3 350 GiB, 3,000 IOPS, 250 MiB/s resolves 2 of 2',
};
const GP2 = { ...GP2_SUMMARY, group: GROUP };
const CACHE = { ...CACHE_SUMMARY, group: GROUP };
const ALONE: S['FindingSummary'] = {
  ...CACHE_SUMMARY,
  id: 'f0000000-0000-4000-8000-000000000009',
  rule: 'thread-pool-saturation',
  title: 'tikv-9: scheduler pool saturated',
  dedup_key: 'thread-pool-saturation/demo-prod (demo)/node:tikv-9/scheduler',
  group: null,
};

describe('findings that share a cause', () => {
  it('shows the group in the list: "Primary fix: ... resolves 2 of 2" over its findings', async () => {
    server.use(...clusterHandlers({ findings: [GP2, CACHE, ALONE] }));
    renderRoutes(routes, `/clusters/${CLUSTER_ID}/findings`);
    const table = await screen.findByRole('table', { name: 'Findings' });
    const block = within(table).getByRole('rowgroup', { name: 'Same cause: disk I/O of node 10.0.1.14:20160' });
    expect(within(block).getByText(GROUP.summary)).toBeInTheDocument();
    const [, first, second] = within(block).getAllByRole('row');
    if (!first || !second) throw new Error('expected the group header and two findings');
    expect(within(first).getByRole('cell', { name: 'gp2-burst-depletion' })).toBeInTheDocument();
    expect(within(first).getByText('· Primary fix')).toBeInTheDocument();
    expect(within(second).getByRole('cell', { name: 'block-cache-size' })).toBeInTheDocument();
    expect(within(second).getByText('· Related')).toBeInTheDocument();
    const lone = within(table).getByRole('row', { name: /scheduler pool saturated/ });
    expect(block).not.toContainElement(lone);
  });

  it('shows a "related findings" block on a finding, linking the primary fix', async () => {
    server.use(...clusterHandlers({ findings: [GP2, CACHE] }));
    server.use(
      http.get(apiUrl(`/findings/${CACHE_FINDING}`), () =>
        HttpResponse.json({
          ...CACHE_FINDING_DETAIL,
          group: GROUP,
          related: [
            {
              id: GP2_FINDING,
              rule: GP2_SUMMARY.rule,
              title: GP2_SUMMARY.title,
              severity: 'critical',
              status: 'open',
              dedup_key: GP2_SUMMARY.dedup_key,
              entity_kind: 'volume',
              entity_id: GP2_SUMMARY.entity_id,
              role: 'primary',
              resolved_by_primary: true,
            },
          ],
        } satisfies S['FindingRead']),
      ),
    );
    renderRoutes(routes, `/clusters/${CLUSTER_ID}/findings/${CACHE_FINDING}`);
    const block = await screen.findByRole('region', { name: 'Related findings' });
    expect(within(block).getByText(GROUP.summary)).toBeInTheDocument();
    expect(within(block).getByText('The primary fix resolves this finding.')).toBeInTheDocument();
    const list = within(block).getByRole('list', { name: 'Findings with the same cause' });
    const link = within(list).getByRole('link', { name: GP2_SUMMARY.title });
    expect(link).toHaveAttribute('href', `/clusters/${CLUSTER_ID}/findings/${GP2_FINDING}`);
    expect(list).toHaveTextContent('primary fix · Open · resolved by the primary fix');
  });

  it('shows no block on a finding without a group', async () => {
    server.use(...clusterHandlers());
    renderRoutes(routes, `/clusters/${CLUSTER_ID}/findings/${GP2_FINDING}`);
    expect(await screen.findByRole('heading', { name: GP2_FINDING_DETAIL.title, level: 2 })).toBeInTheDocument();
    expect(screen.queryByRole('region', { name: 'Related findings' })).not.toBeInTheDocument();
  });
});
