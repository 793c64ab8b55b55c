import type { ReactNode } from 'react';
import { Link, Navigate } from 'react-router';
import { atLeast } from '@/features/org';
import { usePageTitle } from '@/lib/usePageTitle';
import { useSettingsCaller } from './settings-session';

/** The link back to the list that every source's page starts with. */
export function BackToSources() {
  return (
    <p>
      <Link to="/settings/sources">← Data sources</Link>
    </p>
  );
}

/** A page that adds a source. Viewers cannot add one (the API answers 403), so they are sent back to the list. */
export function NewSourcePage({ title, lead, children }: { title: string; lead: string; children: ReactNode }) {
  usePageTitle(title);
  const { role } = useSettingsCaller();
  if (!atLeast(role, 'admin')) return <Navigate to="/settings/sources" replace />;
  return (
    <>
      <BackToSources />
      <div className="page__header">
        <h1>{title}</h1>
        <p className="page__lead">{lead}</p>
      </div>
      {children}
    </>
  );
}
