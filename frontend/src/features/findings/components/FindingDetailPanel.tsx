import { QueryError } from '@/components/ErrorState';
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
    return <QueryError title="Could not load this finding" query={finding} />;
  }
  return <FindingDetail finding={finding.data} canManage={canManage} patchPath={patchPath} />;
}
