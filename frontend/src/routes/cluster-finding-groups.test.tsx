import { screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import type { components } from '@/api/schema';
import { routes } from '@/router';
import { renderRoutes } from '@/test/render';
import { apiUrl, server } from '@/test/server';
import {
  ALONE,
  CACHE_FINDING,
  CACHE_GROUPED,
  CACHE_FINDING_DETAIL,
  CLUSTER_ID,
  clusterHandlers,
  GP2_FINDING,
  GP2_FINDING_DETAIL,
  GP2_GROUPED,
  GP2_SUMMARY,
  GROUP,
} from '@/test/cluster-fixtures';

type S = components['schemas'];

describe('findings that share a cause', () => {
  it('shows the group in the list: "Primary fix: ... resolves 2 of 2" over its findings', async () => {
    server.use(...clusterHandlers({ findings: [GP2_GROUPED, CACHE_GROUPED, ALONE] }));
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
    server.use(...clusterHandlers({ findings: [GP2_GROUPED, CACHE_GROUPED] }));
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
