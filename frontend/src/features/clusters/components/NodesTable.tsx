import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { ScrollRegion } from '@/components/ScrollRegion';
import { formatAwsThroughput, formatValue } from '@/lib/format';
import { useNodes, type NodeInstance, type NodeVolume } from '../api';

/** A link out (AWS console, Grafana): a new tab, named for a screen reader by what it opens. */
function ExternalLink({ href, what, children }: { href: string; what: string; children: string }) {
  // the accessible name starts with the visible text (WCAG 2.5.3, label in name)
  return (
    <a href={href} target="_blank" rel="noopener noreferrer" aria-label={`${children} of ${what} (opens in a new tab)`}>
      {children} <span aria-hidden="true">↗</span>
    </a>
  );
}

function VolumeLine({ volume }: { volume: NodeVolume }) {
  const parts = [
    formatValue(volume.size_gib, 'GiB'),
    // gp2 (and st1/sc1) IOPS are not provisioned: the API gives the baseline the type derives from the size.
    volume.iops !== null && volume.iops !== undefined
      ? `${formatValue(volume.iops, 'IOPS')}${volume.iops_provisioned ? '' : ' baseline'}`
      : null,
    volume.throughput_mibps !== null && volume.throughput_mibps !== undefined
      ? formatValue(volume.throughput_mibps, 'MiB/s')
      : null,
  ].filter(Boolean);
  return (
    <li>
      <span className="mono">{volume.volume_id}</span> <strong>{volume.volume_type}</strong>
      <span className="muted"> ({volume.role})</span> {parts.join(' · ')}
      {volume.burstable && (
        <span className="muted" title="Spends burst credits above its baseline; sustained load drains them.">
          {' '}
          · bursts
        </span>
      )}
      {volume.console_url && (
        <>
          {' '}
          · <ExternalLink href={volume.console_url} what={volume.volume_id}>AWS console</ExternalLink>
        </>
      )}
    </li>
  );
}

function InstanceCell({ instance }: { instance: NodeInstance }) {
  const ebs = instance.ebs;
  return (
    <>
      {instance.instance_type}
      {instance.vcpus !== null && instance.memory_gib !== null && (
        <span className="muted">
          {' '}
          ({instance.vcpus} vCPU, {formatValue(instance.memory_gib, 'GiB')})
        </span>
      )}
      <div className="muted">
        <span className="mono">{instance.instance_id}</span>
        {instance.console_url && (
          <>
            {' '}
            · <ExternalLink href={instance.console_url} what={instance.instance_id}>AWS console</ExternalLink>
          </>
        )}
      </div>
      {ebs ? (
        <div className="muted" title={`EBS limits of ${instance.instance_type}. Source: ${ebs.source}`}>
          EBS {formatAwsThroughput(ebs.baseline_throughput_mbps)} · {formatValue(ebs.baseline_iops, 'IOPS')}
          {ebs.bursts && (
            <>
              {' '}
              (burst {formatAwsThroughput(ebs.max_throughput_mbps)} · {formatValue(ebs.max_iops, 'IOPS')})
            </>
          )}
        </div>
      ) : (
        <div className="muted" title={instance.ebs_note ?? undefined}>
          EBS limits unknown{instance.ebs_note ? ': not judged by any finding' : ''}
        </div>
      )}
    </>
  );
}

/** The cluster's TiKV nodes with their EC2 instance (and its EBS limits) and volumes. */
export function NodesTable({ clusterId }: { clusterId: string }) {
  const nodes = useNodes(clusterId);

  if (nodes.isPending) return <LoadingState label="Loading nodes…" />;
  if (nodes.isError) {
    return <QueryError title="Could not load nodes" query={nodes} />;
  }
  if (nodes.data.items.length === 0) {
    return (
      <EmptyState title="No nodes yet" headingLevel={3}>
        <p>Headroom has not seen a TiKV store of this cluster yet. Nodes appear after the first collection.</p>
      </EmptyState>
    );
  }
  return (
    <ScrollRegion label="TiKV nodes table">
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
            const volumes = node.volumes ?? [];
            return (
              <tr key={node.id}>
                <th scope="row">
                  <span className="mono">{node.store_address}</span>
                  {node.store_id !== null && node.store_id !== undefined && (
                    <span className="muted"> (store {node.store_id})</span>
                  )}
                  {node.grafana_url && (
                    <div className="small">
                      <ExternalLink href={node.grafana_url} what={node.store_address}>
                        Grafana dashboard
                      </ExternalLink>
                    </div>
                  )}
                </th>
                <td>
                  {node.instance ? (
                    <InstanceCell instance={node.instance} />
                  ) : (
                    <span className="muted" title="No EC2 instance matched to this store yet (connect AWS).">
                      Not mapped to an EC2 instance
                    </span>
                  )}
                </td>
                <td>
                  {volumes.length === 0 ? (
                    <span className="muted">None known</span>
                  ) : (
                    <ul className="plain-list" aria-label={`Volumes of ${node.store_address}`}>
                      {volumes.map((v) => (
                        <VolumeLine key={v.volume_id} volume={v} />
                      ))}
                    </ul>
                  )}
                </td>
                <td>{node.version ?? <span className="muted">Unknown</span>}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
