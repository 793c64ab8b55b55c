import { screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { routes } from '@/router';
import { apiError, renderRoutes, SESSION } from '@/test/render';
import { apiUrl, server } from '@/test/server';

const CHANNEL_ID = 'a1e70000-0000-4000-8000-000000000001';
const channel = (lastDeliveries: unknown[]) => ({
  id: CHANNEL_ID,
  name: 'ops-room',
  kind: 'slack',
  url_hint: 'https://hooks.slack.com',
  has_secret: false,
  min_severity: 'critical',
  families: [],
  quiet_hours: null,
  renotify_hours: null,
  burst_horizon_hours: 6,
  ceiling_horizon_days: null,
  enabled: true,
  created_at: '2026-11-27T06:00:00Z',
  last_deliveries: lastDeliveries,
});
// As the API says a test delivery: its title only names it; whether the channel works is in its result.
const RESULT: Record<string, (error: string | null) => string> = {
  sent: () => 'Delivered: this channel works.',
  failed: (error) => `Not delivered: ${error}`,
  pending: (error) => `Not delivered yet: ${error} Headroom tries again by itself.`,
};
const delivery = (status: string, error: string | null, code: number | null) => ({
  id: 1,
  event: 'test',
  title: 'Test alert',
  severity: 'warning',
  status,
  result: RESULT[status]!(error),
  attempts: 1,
  last_status_code: code,
  last_error: error,
  created_at: '2026-11-27T06:01:00Z',
  sent_at: status === 'sent' ? '2026-11-27T06:01:01Z' : null,
  next_attempt_at: null,
  forecast: null,
});

describe('alert channels settings', () => {
  it('adds a channel, checks the form in words, sends a test and shows what the service answered', async () => {
    let created: Record<string, unknown> | null = null;
    let tested = false;
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/alert-channels'), () =>
        HttpResponse.json({
          items: created ? [channel(tested ? [delivery('failed', 'hooks.slack.com answered HTTP 404: no_service', 404)] : [])] : [],
        }),
      ),
      http.post(apiUrl('/alert-channels'), async ({ request }) => {
        created = (await request.json()) as Record<string, unknown>;
        return HttpResponse.json(channel([]), { status: 201 });
      }),
      http.post(apiUrl(`/alert-channels/${CHANNEL_ID}/test`), () => {
        tested = true;
        return HttpResponse.json(channel([delivery('failed', 'hooks.slack.com answered HTTP 404: no_service', 404)]));
      }),
    );
    const { user } = renderRoutes(routes, '/settings/alerts');
    expect(await screen.findByRole('region', { name: 'No alert channels' })).toBeInTheDocument();
    const form = screen.getByRole('form', { name: 'Add an alert channel' });
    await user.click(within(form).getByRole('button', { name: 'Add channel' }));
    expect(within(form).getByText('Give the channel a name, e.g. the team or room it reaches.')).toBeInTheDocument();
    expect(within(form).getByText('Enter the full URL, starting with https:// (or http://).')).toBeInTheDocument();
    await user.type(within(form).getByLabelText('Name'), 'ops-room');
    await user.type(within(form).getByLabelText('URL'), 'https://hooks.slack.com/services/T/B/X');
    await user.selectOptions(within(form).getByLabelText('Send findings from'), 'critical');
    await user.selectOptions(within(form).getByLabelText('Quiet from'), '22');
    await user.click(within(form).getByRole('button', { name: 'Add channel' }));
    expect(within(form).getByText('Choose both hours of the quiet period, and two different ones.')).toBeInTheDocument();
    await user.selectOptions(within(form).getByLabelText('Quiet until'), '7');
    await user.type(within(form).getByLabelText('Send again while open, every (hours, optional)'), '4');
    const burst = within(form).getByLabelText('Alert when a burst bucket is forecast to empty within (hours, optional)');
    await user.type(burst, '0.5');
    await user.click(within(form).getByRole('button', { name: 'Add channel' }));
    expect(within(form).getByText('Whole hours from 1 to 168 (a week), or empty for no burst forecast alerts.')).toBeInTheDocument();
    await user.clear(burst);
    await user.type(burst, '6');
    await user.click(within(form).getByRole('button', { name: 'Add channel' }));
    const card = await screen.findByRole('listitem', { name: 'Channel ops-room' });
    expect(created).toEqual({
      name: 'ops-room',
      kind: 'slack',
      url: 'https://hooks.slack.com/services/T/B/X',
      min_severity: 'critical',
      families: [],
      quiet_hours: [22, 7],
      renotify_hours: 4,
      burst_horizon_hours: 6,
    });
    expect(card).toHaveTextContent('https://hooks.slack.com · critical and above');
    expect(card).toHaveTextContent('burst bucket empty within 6 h');
    await user.click(within(card).getByRole('button', { name: 'Send test' }));
    expect(await within(card).findByText('Not delivered: hooks.slack.com answered HTTP 404: no_service')).toBeInTheDocument();
    expect(card).not.toHaveTextContent(/works/);
  });

  it('asks PagerDuty for its routing key and shows an API refusal', async () => {
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/alert-channels'), () => HttpResponse.json({ items: [] })),
      http.post(apiUrl('/alert-channels'), () =>
        HttpResponse.json(apiError('outbound_address_refused', 'URL: Headroom will not fetch this address: 169.254.169.254 is link-local.'), {
          status: 422,
        }),
      ),
    );
    const { user } = renderRoutes(routes, '/settings/alerts');
    const form = await screen.findByRole('form', { name: 'Add an alert channel' });
    await user.selectOptions(within(form).getByLabelText('Kind'), 'pagerduty');
    await user.type(within(form).getByLabelText('Name'), 'pager');
    await user.type(within(form).getByLabelText('URL'), 'http://169.254.169.254/v2/enqueue');
    await user.click(within(form).getByRole('button', { name: 'Add channel' }));
    expect(within(form).getByText("PagerDuty needs the integration's routing key.")).toBeInTheDocument();
    await user.type(within(form).getByLabelText('Routing key'), 'R0UTING');
    await user.click(within(form).getByRole('button', { name: 'Add channel' }));
    expect(await within(form).findByRole('alert')).toHaveTextContent('169.254.169.254 is link-local');
  });

  it('says how Alertmanager alerts last and asks no re-notify interval for them', async () => {
    let created: Record<string, unknown> | null = null;
    const am = {
      ...channel([{ ...delivery('sent', null, 200), title: 'Test alert; it ends by itself after 5 min' }]),
      kind: 'alertmanager',
      url_hint: 'http://alertmanager:9093',
    };
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/alert-channels'), () => HttpResponse.json({ items: created ? [am] : [] })),
      http.post(apiUrl('/alert-channels'), async ({ request }) => {
        created = (await request.json()) as Record<string, unknown>;
        return HttpResponse.json(am, { status: 201 });
      }),
    );
    const { user } = renderRoutes(routes, '/settings/alerts');
    const form = await screen.findByRole('form', { name: 'Add an alert channel' });
    expect(within(form).getByLabelText('Send again while open, every (hours, optional)')).toBeInTheDocument();
    await user.selectOptions(within(form).getByLabelText('Kind'), 'alertmanager');
    expect(within(form).queryByLabelText('Send again while open, every (hours, optional)')).not.toBeInTheDocument();
    expect(form).toHaveTextContent('Open findings are re-posted every minute');
    expect(form).toHaveTextContent("Send test's alert ends by itself after 5 minutes.");
    await user.type(within(form).getByLabelText('Name'), 'am');
    await user.type(within(form).getByLabelText('URL'), 'http://alertmanager:9093');
    await user.click(within(form).getByRole('button', { name: 'Add channel' }));
    const card = await screen.findByRole('listitem', { name: 'Channel ops-room' });
    expect(created).not.toHaveProperty('renotify_hours');
    expect(card).toHaveTextContent('re-posted every minute while open; a test alert ends by itself');
    expect(card).toHaveTextContent('Test alert; it ends by itself after 5 min · Delivered: this channel works.');
  });

  it('says a test that is being retried is not delivered yet, why, and when it is tried again', async () => {
    const reason = 'Could not reach hooks.example.invalid: the host name does not resolve. Check the URL.';
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/alert-channels'), () =>
        HttpResponse.json({
          items: [channel([{ ...delivery('pending', reason, null), next_attempt_at: '2026-11-27T06:02:00Z' }])],
        }),
      ),
    );
    renderRoutes(routes, '/settings/alerts');
    const card = await screen.findByRole('listitem', { name: 'Channel ops-room' });
    expect(
      within(card).getByText(`Not delivered yet: ${reason} Headroom tries again by itself. Next try: 27 Nov 2026, 06:02 UTC.`),
    ).toBeInTheDocument();
    expect(card).not.toHaveTextContent(/works|Error|Errno/);
  });

  it('lets a viewer see the channels but not change them', async () => {
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json({ ...SESSION, role: 'viewer' })),
      http.get(apiUrl('/alert-channels'), () =>
        HttpResponse.json({
          items: [
            channel([
              delivery('sent', null, 200),
              { ...delivery('sent', null, 202), id: 2, event: 'forecast', title: 'vol-1 burst', result: 'Delivered.', forecast: 'the burst bucket empties in 5 h' },
            ]),
          ],
        }),
      ),
    );
    renderRoutes(routes, '/settings/alerts');
    const card = await screen.findByRole('listitem', { name: 'Channel ops-room' });
    expect(within(card).getByText('Delivered: this channel works.')).toBeInTheDocument();
    expect(card).toHaveTextContent('forecast · vol-1 burst (the burst bucket empties in 5 h) · Delivered.');
    expect(within(card).queryByRole('button', { name: 'Send test' })).not.toBeInTheDocument();
    expect(screen.queryByRole('form', { name: 'Add an alert channel' })).not.toBeInTheDocument();
  });
});
