import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, CSRF_COOKIE, readCookie } from '@/api/client';
import { ApiError, unwrap } from '@/api/errors';
import type { paths } from '@/api/schema';

export type Session = paths['/api/v1/auth/me']['get']['responses'][200]['content']['application/json'];
export type SignupInput = NonNullable<paths['/api/v1/auth/signup']['post']['requestBody']>['content']['application/json'];
export type SignupStarted =
  paths['/api/v1/auth/signup']['post']['responses'][202]['content']['application/json'];
export type LoginInput = NonNullable<paths['/api/v1/auth/login']['post']['requestBody']>['content']['application/json'];

export const sessionQueryKey = ['auth', 'session'] as const;
// Set when the person logs out, so signed-in pages send them to plain /login rather than
// /login?next=… as they do when a session expires.
const loggedOutQueryKey = ['auth', 'logged-out'] as const;

/**
 * The current session, or null when nobody is logged in (401 from /auth/me). A browser without the CSRF cookie
 * has no session either (the API sets both cookies together and clears both at logout): it is not asked, so a
 * visitor's pages (log in, sign up) make no request that answers 401, which the browser would log as an error.
 */
export async function fetchSession(): Promise<Session | null> {
  if (readCookie(CSRF_COOKIE) === undefined) return null;
  try {
    return await unwrap(api.GET('/api/v1/auth/me'));
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null;
    throw error;
  }
}

export function useSession() {
  return useQuery({ queryKey: sessionQueryKey, queryFn: fetchSession });
}

/** True right after the person logged out (as opposed to a session that expired or never was). */
export function useLoggedOut(): boolean {
  return useQueryClient().getQueryData(loggedOutQueryKey) === true;
}

function useStartSession() {
  const queryClient = useQueryClient();
  return (session: Session) => {
    queryClient.removeQueries({ queryKey: loggedOutQueryKey });
    queryClient.setQueryData(sessionQueryKey, session);
  };
}

/** Start a sign-up: the API emails a link that finishes it (the same answer for every address). */
export function useSignup() {
  return useMutation({
    mutationFn: (body: SignupInput) => unwrap(api.POST('/api/v1/auth/signup', { body })),
  });
}

/** Follow the emailed sign-up link: creates the account and starts its session. */
export function useConfirmSignup() {
  const startSession = useStartSession();
  return useMutation({
    mutationFn: (token: string) => unwrap(api.POST('/api/v1/auth/signup/confirm', { body: { token } })),
    onSuccess: startSession,
  });
}

export type InvitationAcceptInput =
  NonNullable<paths['/api/v1/auth/accept-invitation']['post']['requestBody']>['content']['application/json'];

/** Follow an invitation link: joins the organisation (creating the account if needed) and starts the session. */
export function useAcceptInvitation() {
  const startSession = useStartSession();
  return useMutation({
    mutationFn: (body: InvitationAcceptInput) => unwrap(api.POST('/api/v1/auth/accept-invitation', { body })),
    onSuccess: startSession,
  });
}

export function useLogin() {
  const startSession = useStartSession();
  return useMutation({
    mutationFn: (body: LoginInput) => unwrap(api.POST('/api/v1/auth/login', { body })),
    onSuccess: startSession,
  });
}

export function useLogout() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/auth/logout')),
    onSuccess: () => {
      // Drop every tenant's cached data, then mark the session gone; signed-in pages redirect.
      queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== sessionQueryKey[0] });
      queryClient.setQueryData(loggedOutQueryKey, true);
      queryClient.setQueryData(sessionQueryKey, null);
    },
  });
}

/** Only follow same-origin paths after login, never an attacker's absolute URL. */
export function safeNextPath(next: string | null | undefined, fallback = '/clusters'): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return fallback;
  if (next.startsWith('/login') || next.startsWith('/signup')) return fallback;
  return next;
}
