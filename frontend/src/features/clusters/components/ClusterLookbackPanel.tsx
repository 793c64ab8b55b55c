import { useState, type FormEvent } from 'react';
import { fieldErrorsOf } from '@/api/errors';
import { QueryError } from '@/components/ErrorState';
import { FormError } from '@/components/FormError';
import { LoadingState } from '@/components/LoadingState';
import { LookbackField } from '@/components/LookbackField';
import { LOOKBACK_HELP, lookbackLabel, type LookbackDays } from '@/lib/lookback';
import { useClusterPreferences, useSetClusterPreferences } from '../api';

/**
 * The cluster's lookback for cost recommendations: its own choice or its organisation's (inherit), changed by
 * admins and owners (`canManage`); everyone sees the one in force.
 */
export function ClusterLookbackPanel({ clusterId, canManage }: { clusterId: string; canManage: boolean }) {
  const prefs = useClusterPreferences(clusterId);
  const save = useSetClusterPreferences(clusterId);
  const [picked, setPicked] = useState<{ days: LookbackDays | null } | null>(null);
  if (prefs.isPending) return <LoadingState label="Loading the lookback" />;
  if (prefs.isError) return <QueryError title="Could not load the lookback" query={prefs} />;
  const { lookback_days: own, organization_lookback_days: org, effective_lookback_days: effective } = prefs.data;
  const value = picked ? picked.days : own;
  const inherit = `Organisation's (${lookbackLabel(org)})`;
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({ lookback_days: value }, { onSuccess: () => setPicked(null) });
  };
  const inForce = (
    <p role="status">
      Cuts are judged on the last <strong>{lookbackLabel(effective)}</strong>
      {own === null ? ", the organisation's choice." : ", this cluster's own choice."}
    </p>
  );
  return (
    <>
      <p className="muted">{LOOKBACK_HELP}</p>
      {inForce}
      {canManage && (
        <form className="form form--inline" onSubmit={onSubmit} noValidate aria-label="Cluster lookback">
          <FormError error={save.error} />
          <LookbackField
            id={`lookback-${clusterId}`}
            value={value}
            inheritLabel={inherit}
            onChange={(days) => setPicked({ days })}
            error={fieldErrorsOf(save.error).lookback_days}
          />
          <button type="submit" className="button button--primary" disabled={save.isPending || value === own}>
            {save.isPending ? 'Saving…' : 'Save'}
          </button>
        </form>
      )}
    </>
  );
}
