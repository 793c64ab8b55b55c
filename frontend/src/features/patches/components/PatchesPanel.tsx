import { Link } from 'react-router';
import { EmptyState } from '@/components/EmptyState';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { ScrollRegion } from '@/components/ScrollRegion';
import { formatDateTime } from '@/lib/format';
import { usePatches } from '../api';

export function patchPath(clusterId: string, patchId: string): string {
  return `/clusters/${clusterId}/patches/${patchId}`;
}

/** The cluster's patches, newest first. */
export function PatchesPanel({ clusterId }: { clusterId: string }) {
  const patches = usePatches(clusterId);
  if (patches.isPending) return <LoadingState label="Loading patches…" />;
  if (patches.isError) {
    return <QueryError title="Could not load patches" query={patches} />;
  }
  if (patches.data.items.length === 0) {
    return (
      <EmptyState title="No patches yet" action={<Link to={`/clusters/${clusterId}/config`}>Create one from the Config tab</Link>}>
        <p>A patch bundles the config and AWS changes of the findings you pick, in every format you deploy with.</p>
      </EmptyState>
    );
  }
  return (
    <ScrollRegion label="Patches table">
      <table className="table">
        <caption className="visually-hidden">Patches</caption>
        <thead>
          <tr>
            <th scope="col">Patch</th>
            <th scope="col">Findings</th>
            <th scope="col">Changes</th>
            <th scope="col">Applied</th>
          </tr>
        </thead>
        <tbody>
          {patches.data.items.map((p) => (
            <tr key={p.id}>
              <th scope="row">
                <Link to={patchPath(clusterId, p.id)}>Patch of {formatDateTime(p.created_at)}</Link>
              </th>
              <td>{p.finding_ids.length}</td>
              <td>{p.changes.length}</td>
              <td>{p.applied_at ? formatDateTime(p.applied_at) : <span className="muted">Not yet</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
