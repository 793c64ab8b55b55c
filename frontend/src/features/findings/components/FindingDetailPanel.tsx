import { errorMessage } from '@/api/errors';
import { ErrorState } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { useFinding } from '../api';
import { FindingDetail } from './FindingDetail';

export function FindingDetailPanel({
  findingId,
  canManage,
  patchPath,
}: {
  findingId: string;
  canManage: boolean;
  patchPath: (patchId: string) => string;
}) {
  const finding = useFinding(findingId);
  if (finding.isPending) return <LoadingState label="Loading the finding…" />;
  if (finding.isError) {
    return (
      <ErrorState
        title="Could not load this finding"
        message={errorMessage(finding.error)}
        onRetry={() => void finding.refetch()}
      />
    );
  }
  return <FindingDetail finding={finding.data} canManage={canManage} patchPath={patchPath} />;
}
