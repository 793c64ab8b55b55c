import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '@/api/client';
import { formatTimestamp } from '@/lib/format';
import { unwrap } from '@/api/errors';
import type { components } from '@/api/schema';

type S = components['schemas'];
export type Channel = S['ChannelRead'];
export type ChannelCreate = S['ChannelCreate'];
export type Delivery = S['DeliveryRead'];

const channelsKey = ['alerts', 'channels'] as const;

export function channelsQuery() {
  return queryOptions({ queryKey: channelsKey, queryFn: () => unwrap(api.GET('/api/v1/alert-channels')) });
}

export function useChannels() {
  return useQuery(channelsQuery());
}

export function useCreateChannel() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: ChannelCreate) => unwrap(api.POST('/api/v1/alert-channels', { body })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: channelsKey }),
  });
}

export function useDeleteChannel() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(api.DELETE('/api/v1/alert-channels/{channel_id}', { params: { path: { channel_id: id } } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: channelsKey }),
  });
}

export function useTestChannel() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(api.POST('/api/v1/alert-channels/{channel_id}/test', { params: { path: { channel_id: id } } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: channelsKey }),
  });
}

export const KIND_LABEL: Record<Channel['kind'], string> = {
  slack: 'Slack',
  webhook: 'Webhook',
  pagerduty: 'PagerDuty',
  alertmanager: 'Alertmanager',
  email: 'Email',
};

export const URL_HINT: Record<Channel['kind'], string> = {
  slack: 'The incoming-webhook URL Slack gave you (https://hooks.slack.com/services/…). Kept secret.',
  webhook: 'Your endpoint; each request is signed with the key below (X-Headroom-Signature).',
  pagerduty: 'https://events.pagerduty.com/v2/enqueue (Events API v2).',
  alertmanager:
    "Your Alertmanager's base URL, e.g. http://alertmanager:9093. Open findings are re-posted every minute (endsAt 10 minutes ahead, so they stay active while open); Alertmanager's repeat_interval decides when you hear again. Send test's alert ends by itself after 5 minutes.",
  email: 'Email addresses, comma-separated (sent through the SMTP server Headroom is configured with).',
};

/**
 * A delivery in words, as the API says it ("Delivered: this channel works.", "Not delivered: …"), with when a
 * pending one is tried again. A test says the channel works only once it was delivered.
 */
export function deliveryText(d: Delivery): string {
  if (d.status === 'pending' && d.next_attempt_at) return `${d.result} Next try: ${formatTimestamp(d.next_attempt_at)}.`;
  return d.result;
}
