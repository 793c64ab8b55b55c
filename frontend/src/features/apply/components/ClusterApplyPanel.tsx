import { QueryError } from '@/components/ErrorState';
import { FormError } from '@/components/FormError';
import { LoadingState } from '@/components/LoadingState';
import { useClusterApplySettings, useSetClusterApplySettings } from '../api';

/** A cluster's apply switch: allowed only while the organisation's is on too (owners change it). */
export function ClusterApplyPanel({ clusterId, isOwner }: { clusterId: string; isOwner: boolean }) {
  const settings = useClusterApplySettings(clusterId);
  const save = useSetClusterApplySettings(clusterId);
  if (settings.isPending) return <LoadingState label="Loading the cluster's apply setting" />;
  if (settings.isError) return <QueryError title="Could not load the cluster's apply setting" query={settings} />;
  const { enabled, organization_enabled: orgOn, effective_enabled: allowed } = settings.data;
  return (
    <>
      <p>
        {allowed
          ? 'Headroom may apply approved fixes on this cluster.'
          : orgOn
            ? 'Apply is off for this cluster.'
            : 'Apply is off for your organisation, so not allowed on this cluster whatever its own setting.'}
      </p>
      <FormError error={save.error} />
      {isOwner ? (
        <label className="field field--checkbox">
          <input
            type="checkbox"
            checked={enabled}
            disabled={save.isPending}
            onChange={(e) => save.mutate(e.target.checked)}
          />{' '}
          Allow apply on this cluster
        </label>
      ) : (
        <p className="muted">Only owners can turn apply on or off.</p>
      )}
    </>
  );
}
