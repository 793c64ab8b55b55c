import { useSession } from '@/features/auth/api';

/**
 * The signed-in person's role and id for settings pages. AppLayout only renders pages once the session
 * loaded, so the fallback (least privilege) is never what a person sees.
 */
export function useSettingsCaller() {
  const session = useSession();
  return {
    role: session.data?.role ?? ('viewer' as const),
    userId: session.data?.user.id ?? '',
  };
}
