import { keepPreviousData, queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '@/api/client';
import { unwrap } from '@/api/errors';
import type { components } from '@/api/schema';

type S = components['schemas'];
export type Role = S['MemberRead']['role'];
export type Member = S['MemberRead'];
export type Invitation = S['InvitationRead'];
export type InvitationCreate = S['InvitationCreate'];
export type InvitationCreated = S['InvitationCreated'];
export type ApiToken = S['ApiTokenRead'];
export type ApiTokenCreate = S['ApiTokenCreate'];
export type ApiTokenCreated = S['ApiTokenCreated'];
export type AuditEntry = S['AuditEntryRead'];

export const ROLES: readonly Role[] = ['viewer', 'admin', 'owner'];
export const ROLE_LABEL: Record<Role, string> = { owner: 'Owner', admin: 'Admin', viewer: 'Viewer' };
const RANK: Record<Role, number> = { viewer: 0, admin: 1, owner: 2 };

/** Whether `role` is at least `needed` (owner > admin > viewer, as the API's Principal.require ranks them). */
export function atLeast(role: Role, needed: Role): boolean {
  return RANK[role] >= RANK[needed];
}

export const orgKeys = {
  members: ['org', 'members'] as const,
  invitations: ['org', 'invitations'] as const,
  tokens: ['org', 'tokens'] as const,
  audit: (beforeId: number | null) => ['org', 'audit', beforeId] as const,
};

export function membersQuery() {
  return queryOptions({ queryKey: orgKeys.members, queryFn: () => unwrap(api.GET('/api/v1/org/members')) });
}

export function useMembers() {
  return useQuery(membersQuery());
}

export function useChangeMemberRole() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ userId, role }: { userId: string; role: Role }) =>
      unwrap(api.PATCH('/api/v1/org/members/{user_id}', { params: { path: { user_id: userId } }, body: { role } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: orgKeys.members }),
  });
}

export function useRemoveMember() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (userId: string) =>
      unwrap(api.DELETE('/api/v1/org/members/{user_id}', { params: { path: { user_id: userId } } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: orgKeys.members }),
  });
}

export function invitationsQuery() {
  return queryOptions({ queryKey: orgKeys.invitations, queryFn: () => unwrap(api.GET('/api/v1/org/invitations')) });
}

export function useInvitations(enabled = true) {
  return useQuery({ ...invitationsQuery(), enabled });
}

export function useInvite() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: InvitationCreate) => unwrap(api.POST('/api/v1/org/invitations', { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: orgKeys.invitations }),
  });
}

export function useRevokeInvitation() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(api.DELETE('/api/v1/org/invitations/{invitation_id}', { params: { path: { invitation_id: id } } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: orgKeys.invitations }),
  });
}

export function tokensQuery() {
  return queryOptions({ queryKey: orgKeys.tokens, queryFn: () => unwrap(api.GET('/api/v1/org/tokens')) });
}

export function useTokens(enabled = true) {
  return useQuery({ ...tokensQuery(), enabled });
}

export function useCreateToken() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: ApiTokenCreate) => unwrap(api.POST('/api/v1/org/tokens', { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: orgKeys.tokens }),
  });
}

export function useRevokeToken() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(api.DELETE('/api/v1/org/tokens/{token_id}', { params: { path: { token_id: id } } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: orgKeys.tokens }),
  });
}

export const AUDIT_PAGE_SIZE = 50;

/** One page of the audit log, newest first; `beforeId` is the cursor (entries with a smaller id). */
export function auditLogQuery(beforeId: number | null) {
  return queryOptions({
    queryKey: orgKeys.audit(beforeId),
    queryFn: () =>
      unwrap(
        api.GET('/api/v1/org/audit-log', {
          params: { query: { limit: AUDIT_PAGE_SIZE, ...(beforeId === null ? {} : { before_id: beforeId }) } },
        }),
      ),
  });
}

export function useAuditLog(beforeId: number | null, enabled = true) {
  return useQuery({ ...auditLogQuery(beforeId), placeholderData: keepPreviousData, enabled });
}

export type RecommendationPreferences = S['RecommendationPreferencesRead'];
const preferencesKey = ['org', 'recommendation-preferences'] as const;

/** The organisation's lookback (clusters inherit it unless they set their own). */
export function useRecommendationPreferences() {
  return useQuery({
    queryKey: preferencesKey,
    queryFn: () => unwrap(api.GET('/api/v1/org/recommendation-preferences')),
  });
}

export function useSetRecommendationPreferences() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: S['RecommendationPreferencesUpdate']) =>
      unwrap(api.PUT('/api/v1/org/recommendation-preferences', { body })),
    onSuccess: (data) => {
      queryClient.setQueryData(preferencesKey, data);
      // Every cluster's lookback in force may follow the organisation's.
      return queryClient.invalidateQueries({ queryKey: ['clusters'] });
    },
  });
}
