import { useState, type FormEvent } from 'react';
import { fieldErrorsOf } from '@/api/errors';
import { QueryError } from '@/components/ErrorState';
import { FormError } from '@/components/FormError';
import { LoadingState } from '@/components/LoadingState';
import { LookbackField } from '@/components/LookbackField';
import { LOOKBACK_HELP, lookbackLabel, type LookbackDays } from '@/lib/lookback';
import { atLeast, useRecommendationPreferences, useSetRecommendationPreferences, type Role } from '../api';

/** The organisation's recommendation preferences: its lookback (admins and owners change it). */
export function RecommendationPreferencesPanel({ role }: { role: Role }) {
  const prefs = useRecommendationPreferences();
  const save = useSetRecommendationPreferences();
  const [picked, setPicked] = useState<LookbackDays | null>(null);
  const canManage = atLeast(role, 'admin');
  if (prefs.isPending) return <LoadingState label="Loading recommendation preferences" />;
  if (prefs.isError) return <QueryError title="Could not load the recommendation preferences" query={prefs} />;
  const current = prefs.data.lookback_days;
  const value = picked ?? current;
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({ lookback_days: value }, { onSuccess: () => setPicked(null) });
  };
  return (
    <section className="card" aria-labelledby="prefs-lookback">
      <h2 id="prefs-lookback">Lookback for cost recommendations</h2>
      <p className="muted">{LOOKBACK_HELP}</p>
      {canManage ? (
        <form className="form form--inline" onSubmit={onSubmit} noValidate aria-label="Organisation lookback">
          <FormError error={save.error} />
          <LookbackField
            id="org-lookback"
            value={value}
            onChange={(d) => setPicked(d ?? current)}
            error={fieldErrorsOf(save.error).lookback_days}
          />
          <button type="submit" className="button button--primary" disabled={save.isPending || value === current}>
            {save.isPending ? 'Saving…' : 'Save'}
          </button>
          {save.isSuccess && picked === null && (
            <p role="status" className="muted">
              Saved: cuts are judged on the last {lookbackLabel(current)}.
            </p>
          )}
        </form>
      ) : (
        <p>
          Cuts are judged on the last <strong>{lookbackLabel(current)}</strong>. Only admins and owners can change it.
        </p>
      )}
    </section>
  );
}
