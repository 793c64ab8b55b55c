import { useState } from 'react';
import { Link } from 'react-router';
import { errorMessage } from '@/api/errors';
import type { ConfigNode, PendingChange } from '@/features/config/api';
import { NodeConfigView } from '@/features/config/components/NodeConfigView';
// the findings feature's modules this page uses, not its index: that brings the finding page's panels and charts
// into this page's first load (150 KB gz per route, bench/frontend_budget.py)
import { useFindingDetails } from '@/features/findings/api';
import { FindingSelector } from '@/features/findings/components/FindingSelector';
import { useCreatePatch } from '@/features/patches/api';
import { DownloadButtons } from '@/features/patches/components/DownloadButtons';
import { PatchDiff } from '@/features/patches/components/PatchDiff';
import { patchPath } from '@/features/patches/components/PatchesPanel';
import { appliesTo } from '@/lib/change';
import { usePageTitle } from '@/lib/usePageTitle';
import { useClusterContext } from './cluster-layout';

export default function ClusterConfigPage() {
  const { cluster, canManage } = useClusterContext();
  usePageTitle(`Config · ${cluster.name}`);
  const [selected, setSelected] = useState<string[]>([]);
  const [choices, setChoices] = useState<Record<string, number>>({});
  const [node, setNode] = useState<ConfigNode | undefined>();
  const details = useFindingDetails(selected);
  const createPatch = useCreatePatch(cluster.id);

  // The changes of the option chosen for each finding (its first unless the user picks another).
  const chosenChanges = (d: (typeof details)[number]) => {
    const options = d.data?.options ?? [];
    const index = d.data ? (choices[d.data.id] ?? 0) : 0;
    // the first option is the finding's own recommendation (its changes)
    return options.length > 1 && index > 0 ? (options[index]?.changes ?? []) : (d.data?.changes ?? []);
  };
  const changes: PendingChange[] = details.flatMap((d) =>
    chosenChanges(d)
      .filter((c) => c.target === 'tikv')
      .map((c) => ({ key: c.key, proposed: c.proposed, entity: appliesTo(c), finding: d.data?.title ?? '' })),
  );
  const awsChanges = details.reduce((n, d) => n + chosenChanges(d).filter((c) => c.target === 'aws').length, 0);
  const loadingChanges = details.some((d) => d.isPending);
  // The choices appear together once every selected finding has been read: each finding's arriving on its own
  // would push the button below down while someone aims at it (a click meant for it lands on an option).
  const withChoice = loadingChanges
    ? []
    : details.flatMap((d) =>
        d.data && (d.data.options ?? []).length > 1 ? [{ ...d.data, options: d.data.options ?? [] }] : [],
      );
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
        {withChoice.map((finding) => (
          <fieldset key={finding.id} className="option-choice">
            <legend>Fix for {finding.title}</legend>
            {finding.options.map((option, index) => (
              <label key={option.label} className="check">
                <input
                  type="radio"
                  name={`option-${finding.id}`}
                  checked={(choices[finding.id] ?? 0) === index}
                  onChange={() => {
                    setChoices({ ...choices, [finding.id]: index });
                    createPatch.reset();
                  }}
                />
                {option.label}
                <span className="muted">
                  {' '}
                  · {option.changes.some((c) => c.online === false) ? 'needs a restart' : 'online'} ·{' '}
                  {option.impact.summary}
                </span>
              </label>
            ))}
          </fieldset>
        ))}
        <div className="toolbar">
          <button
            type="button"
            className="button button--primary"
            disabled={!canManage || selected.length === 0 || loadingChanges || createPatch.isPending}
            title={canManage ? undefined : 'Only admins can create patches.'}
            onClick={() => {
              const options = Object.fromEntries(Object.entries(choices).filter(([id]) => selected.includes(id)));
              createPatch.mutate(
                Object.keys(options).length > 0 ? { finding_ids: selected, options } : { finding_ids: selected },
              );
            }}
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
