/** What a cluster shows before the advisor has ever run over its data: not zeros (no findings, no savings, a score
 * of 0), which read as "all clear", but that the first analysis is still running. */
export const FIRST_ANALYSIS = 'First analysis running…';

/** Whether the advisor has never run over the cluster's data (the API's advised_at is null). */
export function neverAdvised(cluster: { advised_at?: string | null } | undefined): boolean {
  return cluster !== undefined && (cluster.advised_at === null || cluster.advised_at === undefined);
}

export function FirstAnalysisNotice() {
  return (
    <div className="state" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      <span>
        <strong>{FIRST_ANALYSIS}</strong> Headroom is reading the cluster&apos;s data for the first time: its findings,
        savings and ceilings appear here when the analysis ends (usually within a minute).
      </span>
    </div>
  );
}
