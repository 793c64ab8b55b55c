import { useState } from 'react';
import { Link } from 'react-router';
import { errorMessage } from '@/api/errors';
import { NodeConfigView, type ConfigNode, type PendingChange } from '@/features/config';
import { FindingSelector, useFindingDetails } from '@/features/findings';
import { DownloadButtons, PatchDiff, patchPath, useCreatePatch } from '@/features/patches';
import { appliesTo } from '@/lib/change';
import { usePageTitle } from '@/lib/usePageTitle';
import { useClusterContext } from './cluster-layout';

export default function ClusterConfigPage() {
  const { cluster, canManage } = useClusterContext();
  usePageTitle(`Config · ${cluster.name}`);
  const [selected, setSelected] = useState<string[]>([]);
  const [node, setNode] = useState<ConfigNode | undefined>();
  const details = useFindingDetails(selected);
  const createPatch = useCreatePatch(cluster.id);

  const changes: PendingChange[] = details.flatMap((d) =>
    (d.data?.changes ?? [])
      .filter((c) => c.target === 'tikv')
      .map((c) => ({ key: c.key, proposed: c.proposed, entity: appliesTo(c), finding: d.data?.title ?? '' })),
  );
  const awsChanges = details.reduce((n, d) => n + (d.data?.changes ?? []).filter((c) => c.target === 'aws').length, 0);
  const loadingChanges = details.some((d) => d.isPending);
  const patch = createPatch.data;

  return (
    <div className="config-page">
      <section className="card" aria-labelledby="config-findings-heading">
        <h2 id="config-findings-heading">Preview a fix</h2>
        <p className="muted">
          Pick findings to see the values their changes would set in each node's live config, then create a patch.
        </p>
        <FindingSelector
          clusterId={cluster.id}
          selected={selected}
          onChange={(ids) => {
            setSelected(ids);
            createPatch.reset();
          }}
        />
        <div className="toolbar">
          <button
            type="button"
            className="button button--primary"
            disabled={!canManage || selected.length === 0 || createPatch.isPending}
            title={canManage ? undefined : 'Only admins can create patches.'}
            onClick={() => createPatch.mutate({ finding_ids: selected })}
          >
            {createPatch.isPending ? 'Creating…' : 'Create patch'}
          </button>
          <span className="muted" role="status">
            {loadingChanges
              ? 'Reading the selected findings…'
              : selected.length > 0 &&
                `${changes.length} tikv.toml change${changes.length === 1 ? '' : 's'}` +
                  (awsChanges > 0 ? ` and ${awsChanges} AWS change${awsChanges === 1 ? '' : 's'}` : '')}
          </span>
        </div>
        {createPatch.isError && (
          <p role="alert" className="form-error">
            {errorMessage(createPatch.error)}
          </p>
        )}
      </section>

      {patch && (
        <section className="card" aria-labelledby="new-patch-heading">
          <h2 id="new-patch-heading">Patch created</h2>
          <p>
            <Link to={patchPath(cluster.id, patch.id)}>Open the patch</Link> to mark it applied later.
          </p>
          <PatchDiff patch={patch} initialNode={node?.status_address ?? undefined} />
          <DownloadButtons patch={patch} />
        </section>
      )}

      <section className="card" aria-labelledby="live-config-heading">
        <h2 id="live-config-heading">Live config</h2>
        <NodeConfigView clusterId={cluster.id} nodeId={node?.id} onNodeChange={setNode} changes={changes} />
      </section>
    </div>
  );
}
