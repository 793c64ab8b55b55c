import { useState } from 'react';
import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { ScrollRegion } from '@/components/ScrollRegion';
import { formatDateTime } from '@/lib/format';
import { UploadConfig } from './UploadConfig';
import { appliesTo, flattenConfig, useConfigNodes, useNodeConfig, type ConfigNode, type PendingChange } from '../api';

function show(value: unknown): string {
  if (value === null || value === undefined) return 'not set';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

interface Props {
  clusterId: string;
  nodeId: string | undefined;
  onNodeChange: (node: ConfigNode) => void;
  changes: PendingChange[];
}

/** A node's live config, with the values the pending changes would set next to the current ones. */
export function NodeConfigView({ clusterId, nodeId, onNodeChange, changes }: Props) {
  const nodes = useConfigNodes(clusterId);
  const firstNode = nodes.data?.items[0];
  const node = nodes.data?.items.find((n) => n.id === nodeId) ?? firstNode;
  const config = useNodeConfig(clusterId, node?.id);
  const [search, setSearch] = useState('');
  const [onlyChanged, setOnlyChanged] = useState(false);

  if (nodes.isPending) return <LoadingState label="Loading nodes…" />;
  if (nodes.isError) {
    return <QueryError title="Could not load nodes" query={nodes} />;
  }
  if (!node) {
    return (
      <EmptyState title="No nodes yet" headingLevel={3}>
        <p>Headroom has not read a TiKV node's config for this cluster yet.</p>
      </EmptyState>
    );
  }

  const nodeChanges = changes.filter((c) => appliesTo(c, node));
  const proposedByKey = new Map(nodeChanges.map((c) => [c.key, c]));

  let table;
  if (config.isPending) table = <LoadingState label="Loading the live config…" />;
  else if (config.isError) {
    table = (
      <QueryError title="Could not load this node's config" query={config} />
    );
  } else {
    const entries = flattenConfig(config.data.config);
    const known = new Set(entries.map((e) => e.key));
    // A change to a key the live config does not list still shows, as "not set" today.
    for (const c of nodeChanges) if (!known.has(c.key)) entries.push({ key: c.key, value: undefined });
    const needle = search.trim().toLowerCase();
    const rows = entries.filter(
      (e) => (!onlyChanged || proposedByKey.has(e.key)) && (!needle || e.key.toLowerCase().includes(needle)),
    );
    table = (
      <>
        <p className="muted">
          Version {config.data.version} ({config.data.source}), captured {formatDateTime(config.data.captured_at)} ·{' '}
          {nodeChanges.length} value{nodeChanges.length === 1 ? '' : 's'} would change on this node
        </p>
        {rows.length === 0 ? (
          <p className="muted" role="note">
            No key matches.
          </p>
        ) : (
          <ScrollRegion label={`Live config of ${node.store_address}`} className="table-wrap config-table">
            <table className="table">
              <caption className="visually-hidden">Live config of {node.store_address}</caption>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Live value</th>
                  <th scope="col">Would become</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((e) => {
                  const change = proposedByKey.get(e.key);
                  return (
                    <tr key={e.key} className={change ? 'row--changed' : undefined}>
                      <th scope="row" className="mono">
                        {e.key}
                      </th>
                      <td className="mono">{show(e.value)}</td>
                      <td className="mono">
                        {change ? (
                          <strong title={`From ${change.finding}`}>{show(change.proposed)}</strong>
                        ) : (
                          <span className="muted">unchanged</span>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </ScrollRegion>
        )}
      </>
    );
  }

  return (
    <div className="node-config">
      <div className="toolbar">
        <div className="field field--inline">
          <label htmlFor="config-node">Node</label>
          <select
            id="config-node"
            value={node.id}
            onChange={(e) => {
              const next = nodes.data.items.find((n) => n.id === e.target.value);
              if (next) onNodeChange(next);
            }}
          >
            {nodes.data.items.map((n) => (
              <option key={n.id} value={n.id}>
                {n.store_address}
              </option>
            ))}
          </select>
        </div>
        <div className="field field--inline">
          <label htmlFor="config-search">Search keys</label>
          <input id="config-search" type="search" value={search} onChange={(e) => setSearch(e.target.value)} />
        </div>
        <label className="check">
          <input type="checkbox" checked={onlyChanged} onChange={(e) => setOnlyChanged(e.target.checked)} />
          Only keys that would change
        </label>
      </div>
      <UploadConfig clusterId={clusterId} nodeId={node.id} address={node.store_address} />
      {table}
    </div>
  );
}
