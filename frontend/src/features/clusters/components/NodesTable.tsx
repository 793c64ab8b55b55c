import { errorMessage } from '@/api/errors';
import { EmptyState } from '@/components/EmptyState';
import { ErrorState } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { formatValue } from '@/components/TimeSeriesChart';
import { useInventory, useNodes, type InventoryVolume } from '../api';

// gp2 has no provisioned IOPS: its baseline is 3 IOPS per GiB, at least 100 and at most 16,000 (domain.md §1.1).
const GP2_IOPS_PER_GIB = 3;
const GP2_MIN_IOPS = 100;
const GP2_MAX_IOPS = 16_000;

export function gp2BaselineIops(sizeGib: number): number {
  return Math.min(GP2_MAX_IOPS, Math.max(GP2_MIN_IOPS, GP2_IOPS_PER_GIB * sizeGib));
}

function VolumeLine({ volume }: { volume: InventoryVolume }) {
  const gp2Baseline = volume.type === 'gp2' && volume.iops === null && volume.sizeGib !== null;
  const parts = [
    volume.sizeGib !== null ? formatValue(volume.sizeGib, 'GiB') : null,
    volume.iops !== null ? formatValue(volume.iops, 'IOPS') : null,
    gp2Baseline && volume.sizeGib !== null ? `${formatValue(gp2BaselineIops(volume.sizeGib), 'IOPS')} baseline` : null,
    volume.throughputMibps !== null ? formatValue(volume.throughputMibps, 'MiB/s') : null,
  ].filter(Boolean);
  return (
    <li>
      <span className="mono">{volume.id}</span> <strong>{volume.type}</strong>
      {volume.role ? <span className="muted"> ({volume.role})</span> : null} {parts.join(' · ')}
    </li>
  );
}

/** The cluster's TiKV nodes with their instance and volumes (from the latest snapshot). */
export function NodesTable({ clusterId }: { clusterId: string }) {
  const nodes = useNodes(clusterId);
  const inventory = useInventory(clusterId);

  if (nodes.isPending) return <LoadingState label="Loading nodes…" />;
  if (nodes.isError) {
    return (
      <ErrorState title="Could not load nodes" message={errorMessage(nodes.error)} onRetry={() => void nodes.refetch()} />
    );
  }
  if (nodes.data.items.length === 0) {
    return (
      <EmptyState title="No nodes yet" headingLevel={3}>
        <p>Headroom has not seen a TiKV store of this cluster yet. Nodes appear after the first collection.</p>
      </EmptyState>
    );
  }
  const byAddress = new Map((inventory.data?.nodes ?? []).map((n) => [n.address, n]));
  const volumes = new Map((inventory.data?.volumes ?? []).map((v) => [v.id, v]));
  return (
    <>
      {inventory.isError && (
        <p className="muted" role="note">
          Instance and volume details are unavailable: {errorMessage(inventory.error)}
        </p>
      )}
      <div className="table-wrap">
        <table className="table">
          <caption className="visually-hidden">TiKV nodes</caption>
          <thead>
            <tr>
              <th scope="col">Store</th>
              <th scope="col">Instance type</th>
              <th scope="col">Volumes</th>
              <th scope="col">TiKV version</th>
            </tr>
          </thead>
          <tbody>
            {nodes.data.items.map((node) => {
              const inv = byAddress.get(node.store_address);
              const nodeVolumes = (inv?.volumeIds ?? []).flatMap((id) => volumes.get(id) ?? []);
              return (
                <tr key={node.id}>
                  <th scope="row">
                    <span className="mono">{node.store_address}</span>
                    {node.store_id !== null && node.store_id !== undefined && (
                      <span className="muted"> (store {node.store_id})</span>
                    )}
                  </th>
                  <td>
                    {inventory.isPending ? (
                      <span className="muted">Loading…</span>
                    ) : inv?.instanceType ? (
                      <>
                        {inv.instanceType}
                        {inv.vcpus !== null && inv.memoryGib !== null && (
                          <span className="muted">
                            {' '}
                            ({inv.vcpus} vCPU, {formatValue(inv.memoryGib, 'GiB')})
                          </span>
                        )}
                      </>
                    ) : (
                      <span className="muted">Unknown</span>
                    )}
                  </td>
                  <td>
                    {nodeVolumes.length === 0 ? (
                      <span className="muted">{inventory.isPending ? 'Loading…' : 'None known'}</span>
                    ) : (
                      <ul className="plain-list" aria-label={`Volumes of ${node.store_address}`}>
                        {nodeVolumes.map((v) => (
                          <VolumeLine key={v.id} volume={v} />
                        ))}
                      </ul>
                    )}
                  </td>
                  <td>{node.version ?? inv?.tikvVersion ?? <span className="muted">Unknown</span>}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}
