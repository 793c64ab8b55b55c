import { useMemo } from 'react';
import { useSearchParams } from 'react-router';
import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { useNodes } from '@/features/clusters/api';
import { WhatIfPanel, type Choices } from '@/features/whatif';
import { usePageTitle } from '@/lib/usePageTitle';
import { changesFromSearch } from '@/lib/whatif-link';
import { useClusterContext } from './cluster-layout';

export default function ClusterWhatIfPage() {
  const { cluster } = useClusterContext();
  usePageTitle(`What-if · ${cluster.name}`);
  const nodes = useNodes(cluster.id);
  const [search] = useSearchParams();
  const initial = useMemo(() => changesFromSearch(search), [search]);
  const choices = useMemo<Choices | null>(() => {
    if (!nodes.data) return null;
    const out: Choices = { volumes: [], instances: [], nodes: [] };
    for (const node of nodes.data.items) {
      out.nodes.push({
        ref: node.status_address ?? node.store_address,
        storeAddress: node.store_address,
        statusAddress: node.status_address,
      });
      if (node.instance && !out.instances.some((i) => i.instanceId === node.instance?.instance_id)) {
        out.instances.push({
          instanceId: node.instance.instance_id,
          type: node.instance.instance_type,
          label: `${node.instance.instance_id} (${node.instance.instance_type}, ${node.store_address})`,
        });
      }
      for (const v of node.volumes ?? []) {
        if (out.volumes.some((x) => x.volumeId === v.volume_id)) continue;
        out.volumes.push({
          volumeId: v.volume_id,
          type: v.volume_type,
          sizeGib: v.size_gib,
          iops: v.iops_provisioned ? v.iops : null,
          throughputMibps: v.volume_type === 'gp3' ? v.throughput_mibps : null,
          label: `${v.volume_id} (${v.volume_type} ${v.size_gib} GiB, ${v.role} of ${node.store_address})`,
        });
      }
    }
    return out;
  }, [nodes.data]);

  if (nodes.isPending) return <LoadingState label="Loading the cluster's volumes and instances…" />;
  if (nodes.isError) return <QueryError title="Could not load the cluster's nodes" query={nodes} />;
  if (!choices || choices.nodes.length === 0) {
    return (
      <EmptyState title="Nothing to try changes on yet">
        <p>The cluster has no TiKV node yet. Connect a data source, then come back to try changes.</p>
      </EmptyState>
    );
  }
  return (
    <WhatIfPanel
      key={search.toString()}
      clusterId={cluster.id}
      choices={choices}
      initialChanges={initial}
      findingHref={(id) => `/clusters/${cluster.id}/findings/${id}`}
    />
  );
}
