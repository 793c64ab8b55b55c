import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '@/api/client';
import { unwrap } from '@/api/errors';
import type { components } from '@/api/schema';

type S = components['schemas'];
export type DigestSettings = S['DigestSettingsRead'];
export type DigestSettingsUpdate = S['DigestSettingsUpdate'];
export type DigestSend = S['DigestSendRead'];
export type DigestPreview = S['DigestPreview'];
export type SendTestResult = S['SendTestResult'];
export type EmailVerified = S['EmailVerified'];
export type DigestPreferences = S['DigestPreferencesRead'];
export type DigestPreferencesUpdate = S['DigestPreferencesUpdate'];
export type UnsubscribeResult = S['UnsubscribeResult'];

export const digestKeys = {
  settings: ['digest', 'settings'] as const,
  preview: ['digest', 'preview'] as const,
  preferences: ['digest', 'preferences'] as const,
  clusters: ['digest', 'clusters'] as const,
};

export function digestSettingsQuery() {
  return queryOptions({ queryKey: digestKeys.settings, queryFn: () => unwrap(api.GET('/api/v1/org/digest')) });
}

export function useDigestSettings() {
  return useQuery(digestSettingsQuery());
}

export function useUpdateDigestSettings() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: DigestSettingsUpdate) => unwrap(api.PATCH('/api/v1/org/digest', { body })),
    onSuccess: (settings) => queryClient.setQueryData(digestKeys.settings, settings),
  });
}

/** This week's email, rendered by the server. `enabled` false holds the request back (the page's own content
 * loads first: the preview is the slowest request on the page and must not compete with it). */
export function useDigestPreview(enabled = true) {
  return useQuery({
    queryKey: digestKeys.preview,
    queryFn: () => unwrap(api.GET('/api/v1/org/digest/preview')),
    enabled,
    // The email changes when the advisor runs (minutes apart), not while the page is open.
    staleTime: 60_000,
  });
}

export function useSendTestDigest() {
  return useMutation({ mutationFn: () => unwrap(api.POST('/api/v1/org/digest/send-test')) });
}

export function useVerifyEmail() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (token: string) =>
      unwrap(api.POST('/api/v1/org/digest/verify/{token}', { params: { path: { token } } })),
    // Verified members join the recipients; the settings show who gets the email.
    onSuccess: () => queryClient.invalidateQueries({ queryKey: digestKeys.settings }),
  });
}

/** Your own choices for the organisation's weekly email. */
export function useDigestPreferences() {
  return useQuery({
    queryKey: digestKeys.preferences,
    queryFn: () => unwrap(api.GET('/api/v1/digest/preferences')),
  });
}

export function useUpdateDigestPreferences() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: DigestPreferencesUpdate) => unwrap(api.PUT('/api/v1/digest/preferences', { body })),
    onSuccess: (prefs) => {
      queryClient.setQueryData(digestKeys.preferences, prefs);
      // Turning the email on or off changes this week's recipients.
      void queryClient.invalidateQueries({ queryKey: digestKeys.settings });
    },
  });
}

/** The organisation's clusters, to choose which ones your email covers. */
export function useDigestClusterChoices() {
  return useQuery({
    queryKey: digestKeys.clusters,
    queryFn: () => unwrap(api.GET('/api/v1/clusters')),
    select: (page) => page.items.map((c) => ({ id: c.id, name: c.name })),
  });
}

/** The one-click unsubscribe an email's link opens (no log-in: the token is the authority). */
export function useUnsubscribe() {
  return useMutation({
    mutationFn: (token: string) =>
      unwrap(api.POST('/api/v1/digest/unsubscribe', { params: { query: { token } } })),
  });
}
