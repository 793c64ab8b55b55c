import { errorMessage } from '@/api/errors';
import { useAdviseNow } from '../api';

/** Queue the advisor for this cluster (admins only; viewers see the button disabled with the reason). */
export function AdviseNowButton({ clusterId, canManage }: { clusterId: string; canManage: boolean }) {
  const advise = useAdviseNow(clusterId);
  return (
    <div className="advise-now">
      <button
        type="button"
        className="button button--primary"
        onClick={() => advise.mutate()}
        disabled={!canManage || advise.isPending}
        title={canManage ? undefined : 'Only admins can run the advisor.'}
      >
        {advise.isPending ? 'Queuing…' : 'Run advisor now'}
      </button>
      <span role="status" aria-live="polite">
        {advise.isSuccess && 'The advisor is running; new findings appear here when it finishes.'}
      </span>
      {advise.isError && (
        <p role="alert" className="form-error">
          {errorMessage(advise.error)}
        </p>
      )}
    </div>
  );
}
