import type { ReactNode } from 'react';

/** Shown instead of a panel the person's role may not see (the API would answer 403). */
export function AdminOnly({ what, children }: { what: string; children?: ReactNode }) {
  return (
    <section className="state state--empty" aria-label={`${what} is for admins`}>
      <h2 className="state__title">Only admins and owners can see {what.toLowerCase()}</h2>
      <div className="state__body">{children ?? <p>Ask an owner of your organisation if you need access.</p>}</div>
    </section>
  );
}
