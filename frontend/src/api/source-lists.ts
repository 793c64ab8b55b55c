import { queryOptions } from '@tanstack/react-query';
import { api } from './client';
import { unwrap } from './errors';
import { getAwsConnections, getPrometheusSources } from './source-requests';

// The organisation's data sources, listed: read by the sources settings (features/sources) and by a cluster's source
// badges (features/clusters), under one key each so a page that needs both asks once, and a cluster's overview can
// ask for them as it starts, beside the cluster itself (router.tsx).

export const awsConnectionsKey = ['sources', 'aws'] as const;
export const prometheusSourcesKey = ['sources', 'prometheus'] as const;

export function awsConnectionsQuery() {
  return queryOptions({ queryKey: awsConnectionsKey, queryFn: () => unwrap(getAwsConnections(api)) });
}

export function prometheusSourcesQuery() {
  return queryOptions({ queryKey: prometheusSourcesKey, queryFn: () => unwrap(getPrometheusSources(api)) });
}
