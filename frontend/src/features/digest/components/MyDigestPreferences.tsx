import { useState } from 'react';
import { QueryError } from '@/components/ErrorState';
import { FormError } from '@/components/FormError';
import { LoadingState } from '@/components/LoadingState';
import { formatDateTime } from '@/lib/format';
import {
  useDigestClusterChoices,
  useDigestPreferences,
  useUpdateDigestPreferences,
  type DigestPreferences,
} from '../api';

type Choice = { id: string; name: string };

function PreferencesForm({ saved, clusters }: { saved: DigestPreferences; clusters: Choice[] }) {
  const update = useUpdateDigestPreferences();
  const [weekly, setWeekly] = useState(saved.weekly_email);
  const [allClusters, setAllClusters] = useState(saved.cluster_ids == null);
  const [chosen, setChosen] = useState<Set<string>>(() => new Set(saved.cluster_ids ?? []));
  const toggle = (id: string, on: boolean) =>
    setChosen((current) => {
      const next = new Set(current);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  const noneChosen = !allClusters && chosen.size === 0;
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        update.mutate({
          weekly_email: weekly,
          // Only clusters that still exist; a deleted one would match nothing anyway.
          cluster_ids: allClusters ? null : clusters.filter((c) => chosen.has(c.id)).map((c) => c.id),
        });
      }}
    >
      {saved.unsubscribed_at && !saved.weekly_email && (
        <p className="muted" role="note">
          You unsubscribed with an email&apos;s link on {formatDateTime(saved.unsubscribed_at)}.
        </p>
      )}
      <fieldset className="digest-toggles" disabled={update.isPending}>
        <legend className="visually-hidden">Your weekly email</legend>
        <label className="digest-toggle">
          <input type="checkbox" checked={weekly} onChange={(e) => setWeekly(e.target.checked)} /> Send me the
          weekly email
        </label>
      </fieldset>
      <fieldset className="digest-toggles" disabled={update.isPending || !weekly}>
        <legend>Clusters in my email</legend>
        <label className="digest-toggle">
          <input type="radio" name="digest-clusters" checked={allClusters} onChange={() => setAllClusters(true)} />{' '}
          All clusters <span className="muted">(including ones added later)</span>
        </label>
        <label className="digest-toggle">
          <input type="radio" name="digest-clusters" checked={!allClusters} onChange={() => setAllClusters(false)} />{' '}
          Only the clusters I choose
        </label>
        {!allClusters &&
          (clusters.length === 0 ? (
            <p className="muted">This organisation has no clusters yet.</p>
          ) : (
            <ul className="digest-cluster-choices" aria-label="Clusters to include">
              {clusters.map((c) => (
                <li key={c.id}>
                  <label className="digest-toggle">
                    <input type="checkbox" checked={chosen.has(c.id)} onChange={(e) => toggle(c.id, e.target.checked)} />{' '}
                    {c.name}
                  </label>
                </li>
              ))}
            </ul>
          ))}
      </fieldset>
      {noneChosen && weekly && (
        <p className="muted" role="note">
          With no cluster chosen your email only reports data source problems.
        </p>
      )}
      <button type="submit" className="button" disabled={update.isPending}>
        {update.isPending ? 'Saving…' : 'Save my preferences'}
      </button>
      <div role="status" aria-live="polite">
        {update.isSuccess && <p className="muted">Saved.</p>}
      </div>
      <FormError error={update.error} prefix="Could not save: " />
    </form>
  );
}

/** Your own weekly email: on or off, every cluster or the ones you choose (any member). */
export function MyDigestPreferences() {
  const prefs = useDigestPreferences();
  const clusters = useDigestClusterChoices();
  return (
    <section className="settings-section" aria-labelledby="digest-mine-heading">
      <h2 id="digest-mine-heading">Your weekly email</h2>
      {prefs.isPending || clusters.isPending ? (
        <LoadingState label="Loading your preferences…" />
      ) : prefs.isError ? (
        <QueryError title="Could not load your preferences" query={prefs} />
      ) : clusters.isError ? (
        <QueryError title="Could not load the clusters" query={clusters} />
      ) : (
        <PreferencesForm saved={prefs.data} clusters={clusters.data} />
      )}
    </section>
  );
}
