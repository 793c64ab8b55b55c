import type { ReactNode } from 'react';

interface EmptyStateProps {
  title: string;
  children: ReactNode;
  /** Only pass an action that leads somewhere real. */
  action?: ReactNode;
  headingLevel?: 2 | 3;
}

export function EmptyState({ title, children, action, headingLevel = 2 }: EmptyStateProps) {
  const Heading = headingLevel === 2 ? 'h2' : 'h3';
  return (
    <section className="state state--empty" aria-label={title}>
      <Heading className="state__title">{title}</Heading>
      <div className="state__body">{children}</div>
      {action && <div className="state__action">{action}</div>}
    </section>
  );
}
