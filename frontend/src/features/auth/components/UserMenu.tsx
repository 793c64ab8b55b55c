import { useEffect, useId, useRef, useState } from 'react';
import { errorMessage } from '@/api/errors';
import { useLogout, type Session } from '../api';

const ROLE_LABEL: Record<Session['role'], string> = { owner: 'Owner', admin: 'Admin', viewer: 'Viewer' };

function initials(session: Session): string {
  const name = session.user.full_name?.trim();
  if (!name) return session.user.email.charAt(0).toUpperCase() || '?';
  const words = name.split(/\s+/).filter(Boolean);
  return ((words[0]?.[0] ?? '') + (words.length > 1 ? (words[words.length - 1]?.[0] ?? '') : '')).toUpperCase();
}

/**
 * The account button in the top bar; its menu holds Log out (signed-in pages then redirect to /login). Its name is
 * the text it shows, the user's name (WCAG 2.5.3 Label in Name); the initials beside it are a picture of that
 * name, hidden from assistive technology, and on a phone the name is hidden from sight only.
 */
export function UserMenu({ session }: { session: Session }) {
  const [open, setOpen] = useState(false);
  const menuId = useId();
  const rootRef = useRef<HTMLDivElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const firstItemRef = useRef<HTMLButtonElement>(null);
  const logout = useLogout();
  const displayName = session.user.full_name?.trim() || session.user.email;

  useEffect(() => {
    if (!open) return;
    firstItemRef.current?.focus();
    const onPointerDown = (event: PointerEvent) => {
      if (!rootRef.current?.contains(event.target as Node)) setOpen(false);
    };
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key === 'Escape') {
        setOpen(false);
        buttonRef.current?.focus();
      }
    };
    document.addEventListener('pointerdown', onPointerDown);
    document.addEventListener('keydown', onKeyDown);
    return () => {
      document.removeEventListener('pointerdown', onPointerDown);
      document.removeEventListener('keydown', onKeyDown);
    };
  }, [open]);

  return (
    <div className="user-menu" ref={rootRef}>
      <button
        ref={buttonRef}
        type="button"
        className="user-menu__button"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        onClick={() => setOpen((o) => !o)}
      >
        <span className="user-menu__avatar" aria-hidden="true">
          {initials(session)}
        </span>
        <span className="user-menu__name">{displayName}</span>
        <span className="user-menu__caret" aria-hidden="true">
          ▾
        </span>
      </button>
      {open && (
        <div className="user-menu__popover">
          <div className="user-menu__identity">
            <span className="user-menu__email">{session.user.email}</span>
            <span className="user-menu__role">
              {ROLE_LABEL[session.role]} · {session.organization.name}
            </span>
          </div>
          <ul id={menuId} role="menu" aria-label="Account">
            <li role="none">
              <button
                ref={firstItemRef}
                type="button"
                role="menuitem"
                className="user-menu__item"
                disabled={logout.isPending}
                onClick={() => logout.mutate()}
              >
                {logout.isPending ? 'Logging out…' : 'Log out'}
              </button>
            </li>
          </ul>
          {logout.error && (
            <p className="user-menu__error" role="alert">
              {errorMessage(logout.error)}
            </p>
          )}
        </div>
      )}
    </div>
  );
}
