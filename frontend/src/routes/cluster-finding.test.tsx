import { screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { routes } from '@/router';
import { renderRoutes, SESSION } from '@/test/render';
import { apiUrl, server } from '@/test/server';
import { CLUSTER_ID, clusterHandlers, GP2_FINDING, GP2_FINDING_DETAIL, VIEWER_SESSION } from '@/test/cluster-fixtures';

const PATH = `/clusters/${CLUSTER_ID}/findings/${GP2_FINDING}`;

describe('finding detail', () => {
  it('shows evidence with units and the sources of limits, why, impact, changes and options', async () => {
    server.use(...clusterHandlers());
    renderRoutes(routes, PATH);
    expect(await screen.findByRole('heading', { name: GP2_FINDING_DETAIL.title, level: 2 })).toBeInTheDocument();

    const measures = screen.getByRole('table', { name: 'Measures against limits' });
    const balance = within(measures).getByRole('row', { name: /minimum BurstBalance/ });
    expect(within(balance).getAllByRole('cell').map((c) => c.textContent)).toEqual([
      '0%',
      '10% low-balance threshold',
      // the public document with its link, not a section number of a private notebook
      'AWS: Amazon CloudWatch metrics for Amazon EBS (https://docs.aws.amazon.com/ebs/latest/userguide/using_cloudwatch_ebs.html)',
    ]);
    const demand = within(measures).getByRole('row', { name: /drain-period demand p95/ });
    expect(within(demand).getAllByRole('cell').map((c) => c.textContent)).toEqual([
      '1,434 IOPS',
      '1,050 IOPS gp2 baseline (3 IOPS/GiB) (sustained)',
      // the volume's ceiling as the API names it: its kind and its public source, the link clickable
      'gp2 baseline IOPS (sustained) source: gp2 350 GiB: AWS: General Purpose SSD volumes (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)',
    ]);
    expect(within(demand).getByRole('link', { name: 'https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html' })).toHaveAttribute(
      'href',
      'https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html',
    );
    expect(screen.getByText('Condition: BurstBalance <= 10% in the window')).toBeInTheDocument();

    // the evidence series as charts, one per unit, ceilings with their sources, a series without data said so
    const evidence = screen.getByRole('region', { name: 'Evidence' });
    const iopsChart = await within(evidence).findByRole('figure', { name: 'counted IOPS vol-043ed06aaced3aa8a' });
    // the plot's accessible name says what is drawn and the limit the finding was judged by
    expect(within(iopsChart).getByRole('img').getAttribute('aria-label')).toMatch(
      /^counted IOPS vol-043ed06aaced3aa8a, in IOPS: line for counted IOPS vol-043ed06aaced3aa8a\. limits: gp2 baseline \(3 IOPS\/GiB\), the finding's limit at 1,050 IOPS \(source: AWS: General Purpose SSD volumes/,
    );
    const legend = within(iopsChart).getByRole('list', { name: /legend/ });
    expect(legend).toHaveTextContent("gp2 baseline (3 IOPS/GiB), the finding's limit: 1,050 IOPS (source: AWS: General Purpose SSD volumes (gp2 I/O credits and burst) (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html))");
    // a line stored without its source says so; the chart borrows none from a measure or the finding
    expect(legend).toHaveTextContent('gp2 burst, while credits last: 3,000 IOPS (source: source not recorded (the finding was stored before its lines carried one))');
    const balanceChart = await within(evidence).findByRole('figure', { name: 'BurstBalance vol-043ed06aaced3aa8a (%)' });
    const balanceLegend = within(balanceChart).getByRole('list', { name: /legend/ });
    expect(balanceLegend).toHaveTextContent(`low: 10% (source: Headroom's threshold: a low balance (How Headroom decides: Burst buckets: when a forecast is a finding))`);
    // Headroom's own threshold links to its page in the app, named by the page's title
    expect(within(balanceLegend).getByRole('link', { name: 'How Headroom decides: Burst buckets: when a forecast is a finding' }))
      .toHaveAttribute('href', '/decides/burst');
    expect(within(evidence).getByRole('list', { name: 'Series without data' })).toHaveTextContent(
      'No stored points for read latency vol-043ed06aaced3aa8a in the window.', // no view name,
    );

    const why = screen.getByRole('region', { name: 'Why it matters' });
    expect(within(why).getByText(/earns I\/O credits/)).toBeInTheDocument();
    // Sources are public documents with their links, not numbered sections of internal notes.
    const gp2Doc = within(why).getByRole('link', { name: 'https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html' });
    expect(gp2Doc).toHaveAttribute('href', 'https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html');
    expect(within(why).getByText(/AWS: Amazon CloudWatch metrics for Amazon EBS/)).toBeInTheDocument();
    expect(why).not.toHaveTextContent(/domain\.md|§/);

    const impact = screen.getByRole('region', { name: 'Impact of the fix' });
    expect(within(impact).getByText('1,050 IOPS → 3,000 IOPS')).toBeInTheDocument();
    expect(within(impact).getByText('137% of the limit (37% over) now → 47.8% of the limit after the fix')).toBeInTheDocument();
    expect(within(impact).getByText(/\$35\.00 → \$33\.00 \(-\$2\.00\)/)).toBeInTheDocument();
    // Prices differ by region: the cost says whose.
    expect(within(impact).getByText(/at us-east-1 on-demand prices/)).toBeInTheDocument();

    const changes = screen.getByRole('table', { name: 'Recommended changes' });
    const iops = within(changes).getByRole('row', { name: /volume\.iops/ });
    expect(within(iops).getByRole('cell', { name: 'not set' })).toBeInTheDocument();
    expect(within(iops).getByRole('cell', { name: '3,000 IOPS' })).toBeInTheDocument();

    const options = screen.getByRole('region', { name: 'Options' });
    expect(within(options).getByText('gp2 grown to 638 GiB')).toBeInTheDocument();
    expect(within(options).getByText('volume.size: 350 GiB → 638 GiB')).toBeInTheDocument();
  });

  it('says the typed forecasts of the evidence in words, with how they were made', async () => {
    server.use(...clusterHandlers());
    renderRoutes(routes, PATH);
    const forecasts = await screen.findByRole('list', { name: 'Forecasts' });
    const items = within(forecasts).getAllByRole('listitem');
    expect(items.map((li) => li.textContent)).toEqual([
      'Empties in 25 min at 2,500 IOPS (balance 40% now), at 05:17 UTC (between 05:10 and 05:30); then 1,050 IOPS.',
      'Refills in 2 h at the off-peak 300 IOPS.',
    ]);
    expect(items[0]).toHaveAttribute('title', 'physics: gp2 bucket stepped along the demand trend (AWS: General Purpose SSD volumes (gp2 I/O credits and burst) (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html))');
  });

  it('lets an admin acknowledge, then reopen', async () => {
    const posted: string[] = [];
    let status: 'open' | 'acknowledged' = 'open';
    server.use(...clusterHandlers());
    server.use(
      http.get(apiUrl(`/findings/${GP2_FINDING}`), () => HttpResponse.json({ ...GP2_FINDING_DETAIL, status })),
      http.post(apiUrl(`/findings/${GP2_FINDING}/:action`), ({ params }) => {
        posted.push(String(params.action));
        status = params.action === 'acknowledge' ? 'acknowledged' : 'open';
        return HttpResponse.json({ ...GP2_FINDING_DETAIL, status });
      }),
    );
    const { user } = renderRoutes(routes, PATH);
    const actions = await screen.findByRole('group', { name: 'Finding actions' });
    await user.click(within(actions).getByRole('button', { name: 'Acknowledge' }));
    expect(await within(actions).findByRole('button', { name: 'Reopen' })).toBeInTheDocument();
    expect(within(actions).queryByRole('button', { name: 'Acknowledge' })).not.toBeInTheDocument();
    await user.click(within(actions).getByRole('button', { name: 'Reopen' }));
    expect(await within(actions).findByRole('button', { name: 'Acknowledge' })).toBeInTheDocument();
    expect(posted).toEqual(['acknowledge', 'reopen']);
  });

  it('snoozes until a time the chosen number of days ahead', async () => {
    let until = '';
    server.use(...clusterHandlers());
    server.use(
      http.post(apiUrl(`/findings/${GP2_FINDING}/snooze`), async ({ request }) => {
        until = ((await request.json()) as { until: string }).until;
        return HttpResponse.json({
          ...GP2_FINDING_DETAIL,
          status: 'snoozed',
          snoozed_until: until,
          history: [
            ...GP2_FINDING_DETAIL.history,
            { at: '2026-11-22T06:00:00Z', action: 'finding.snoozed', actor_user_id: SESSION.user.id, details: { from: 'open', to: 'snoozed', until: '2026-12-22T06:00:00Z' } },
          ],
        });
      }),
    );
    const { user } = renderRoutes(routes, PATH);
    await user.selectOptions(await screen.findByLabelText('Snooze for'), '30');
    const before = Date.now();
    await user.click(screen.getByRole('button', { name: 'Snooze' }));
    expect(await screen.findByText(/^Snoozed until \d+ \w+ \d{4}, \d\d:\d\d UTC$/, { selector: 'span' })).toBeInTheDocument();
    // the history says it in words, with the date and who did it
    const history = screen.getByRole('region', { name: 'History' });
    expect(history).toHaveTextContent('Opened by the advisor');
    expect(history).toHaveTextContent('Snoozed until 22 Dec 2026, 06:00 UTC by a member');
    const days = (Date.parse(until) - before) / 86_400_000;
    expect(days).toBeGreaterThan(29.99);
    expect(days).toBeLessThan(30.01);
  });

  it('offers a viewer no actions, and says why', async () => {
    server.use(...clusterHandlers({ session: VIEWER_SESSION }));
    renderRoutes(routes, PATH);
    expect(
      await screen.findByText('Only admins can acknowledge, snooze, resolve or reopen findings.'),
    ).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Acknowledge' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Resolve' })).not.toBeInTheDocument();
  });

  it("shows the API's message for a finding that is not there", async () => {
    server.use(...clusterHandlers());
    renderRoutes(routes, `/clusters/${CLUSTER_ID}/findings/f0000000-0000-4000-8000-0000000000ff`);
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load this finding');
    expect(alert).toHaveTextContent('Finding not found.');
  });
});
