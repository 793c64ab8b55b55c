import { screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { DECIDES_PAGES } from '@/lib/decides';
import { routes } from '@/router';
import { renderRoutes, SESSION } from '@/test/render';
import { apiUrl, server } from '@/test/server';

const signedIn = () => server.use(http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)));

// What a reader of these pages never sees: a repository path, a module, a file of the repository.
const REPOSITORY_TEXT = /\bdocs\/|\bbackend\/|\.py\b|\b[\w-]+\.md\b/;

describe('How Headroom decides', () => {
  it('lists every threshold page by its title, each a link to its page', async () => {
    signedIn();
    renderRoutes(routes, '/decides');
    expect(await screen.findByRole('heading', { name: 'How Headroom decides', level: 1 })).toBeInTheDocument();
    const list = screen.getByRole('list', { name: 'Pages' });
    const links = within(list).getAllByRole('link');
    expect(links.map((l) => l.textContent).sort()).toEqual(DECIDES_PAGES.map((p) => p.title).sort());
    // in the repository index's order, each with what it explains
    await waitFor(() => expect(within(list).getAllByRole('listitem')[0]).toHaveTextContent(
      'When a condition counts as sustained: when a condition counts as sustained: minimum share of the window',
    ));
    expect(links.length).toBeGreaterThanOrEqual(16);
    expect(within(list).getByRole('link', { name: 'When a condition counts as sustained' })).toHaveAttribute(
      'href',
      '/decides/sustained',
    );
    expect(list).not.toHaveTextContent(REPOSITORY_TEXT);
    // the main navigation leads here
    expect(within(screen.getByRole('navigation', { name: 'Main' })).getByRole('link', { name: 'How Headroom decides' }))
      .toHaveAttribute('href', '/decides');
  });

  it('renders a page from its Markdown: headings, tables, in-app links between pages, public links', async () => {
    signedIn();
    renderRoutes(routes, '/decides/thread-pools');
    const article = await screen.findByRole('article', {
      name: 'Thread pools: when a pool is saturated, and what size to propose',
    });
    expect((await within(article).findAllByRole('table')).length).toBeGreaterThan(0);
    const pingcap = within(article)
      .getAllByRole('link')
      .find((a) => a.getAttribute('href')?.startsWith('https://docs.pingcap.com/'));
    expect(pingcap).toHaveAttribute('target', '_blank');
    // the rule's module is not a path the reader can open: the page says it in words
    expect(article).toHaveTextContent("Headroom's source");
    expect(article).not.toHaveTextContent(REPOSITORY_TEXT);
  });

  it('turns a link to another threshold page into an in-app link named by that page', async () => {
    signedIn();
    renderRoutes(routes, '/decides/volume-ceilings');
    const article = await screen.findByRole('article', { name: 'Volume ceilings and the size of a fix' });
    const sustained = await within(article).findAllByRole('link', { name: 'When a condition counts as sustained' });
    expect(sustained[0]).toHaveAttribute('href', '/decides/sustained');
    expect(article).not.toHaveTextContent(REPOSITORY_TEXT);
  });

  it('shows no repository path on any page', async () => {
    for (const page of DECIDES_PAGES) {
      signedIn();
      const { unmount } = renderRoutes(routes, `/decides/${page.slug}`);
      const article = await screen.findByRole('article', { name: page.title });
      await within(article).findByRole('region', { name: 'Page text' });
      expect(article, page.slug).not.toHaveTextContent(REPOSITORY_TEXT);
      unmount();
    }
  });

  it('says so for a page that does not exist', async () => {
    signedIn();
    renderRoutes(routes, '/decides/nothing-here');
    expect(await screen.findByRole('region', { name: 'No such page' })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'See every page of How Headroom decides' })).toHaveAttribute('href', '/decides');
  });

  it("shows each rule's record: how often its prediction held, and in words when no fix was applied", async () => {
    signedIn();
    const statement = (held: number, measured: number) =>
      `The prediction held for ${held} of ${measured} applied fixes measured in the last 90 days (1 missed).`;
    server.use(
      http.get(apiUrl('/rules'), () =>
        HttpResponse.json({
          days: 90,
          items: [
            {
              id: 'volume-throughput-ceiling',
              family: 'aws-volume',
              description: "A volume's MiB/s sit at >= 90% of its throughput ceiling.",
              accuracy: {
                days: 90, measured: 9, held: 7, partly: 1, missed: 1, too_early: 0, not_measurable: 0,
                held_share: 7 / 9, statement: statement(7, 9),
              },
            },
            {
              id: 'block-size',
              family: 'tikv',
              description: 'Bandwidth-bound reads with IOPS to spare: smaller RocksDB blocks.',
              accuracy: {
                days: 90, measured: 0, held: 0, partly: 0, missed: 0, too_early: 0, not_measurable: 0,
                held_share: null, statement: 'No fix of this rule applied yet in the last 90 days.',
              },
            },
          ],
        }),
      ),
    );
    renderRoutes(routes, '/decides');
    const rules = await screen.findByRole('list', { name: 'Rules' });
    const [volume, block] = within(rules).getAllByRole('listitem');
    expect(volume).toHaveTextContent('volume-throughput-ceiling · 77.8% held');
    expect(volume).toHaveTextContent(statement(7, 9));
    // no fix applied: said in words, never 0 %
    expect(block).toHaveTextContent('No fix of this rule applied yet in the last 90 days.');
    expect(block).not.toHaveTextContent('%');
    expect(screen.getByRole('heading', { name: 'How often the advice held', level: 2 })).toBeInTheDocument();
  });
});
