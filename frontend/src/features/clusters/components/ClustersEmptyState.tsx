import { Link } from 'react-router';
import { EmptyState } from '@/components/EmptyState';

/** No clusters yet: say what unlocks this page and, for those who may, link straight to connecting a source. */
export function ClustersEmptyState({ canManage }: { canManage: boolean }) {
  return (
    <EmptyState
      title="No clusters yet"
      action={
        canManage ? (
          <div className="button-row">
            <Link className="button button--primary" to="/settings/sources/aws/new">
              Connect AWS account
            </Link>
            <Link className="button button--secondary" to="/settings/sources/prometheus/new">
              Add Prometheus source
            </Link>
          </div>
        ) : undefined
      }
    >
      <p>Connect an AWS account and a Prometheus to see your TiKV clusters.</p>
      <p className="muted">
        Headroom reads your EC2 instances and EBS volumes from AWS, and TiKV's own metrics from Prometheus, then
        shows how close each store is to its disk and instance limits.
      </p>
      {!canManage && <p>Ask an admin of your organisation to connect them.</p>}
    </EmptyState>
  );
}
