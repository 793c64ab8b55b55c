import { EmptyState } from '@/components/EmptyState';

/** No clusters yet: say what unlocks this page; no button until there is somewhere real to go. */
export function ClustersEmptyState() {
  return (
    <EmptyState title="No clusters yet">
      <p>Connect an AWS account and a Prometheus to see your TiKV clusters.</p>
      <p className="muted">
        Headroom reads your EC2 instances and EBS volumes from AWS, and TiKV's own metrics from Prometheus, then
        shows how close each store is to its disk and instance limits.
      </p>
    </EmptyState>
  );
}
