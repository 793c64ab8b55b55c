import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '@/api/client';
import { unwrap } from '@/api/errors';
import type { components } from '@/api/schema';
import { awsConnectionsKey, awsConnectionsQuery, prometheusSourcesKey, prometheusSourcesQuery } from '@/api/source-lists';

type S = components['schemas'];
export type AwsConnection = S['AwsConnectionRead'];
export type AwsConnectionCreate = S['AwsConnectionCreate'];
export type AwsConnectionCreated = S['AwsConnectionCreated'];
export type AwsTestReport = S['AwsConnectionTestRead'];
export type AwsBackfill = S['AwsBackfillRead'];
export type Sweep = S['CollectionSweepRead'];
export type AwsSetup = S['AwsSetupRead'];
export type PrometheusSource = S['PrometheusSourceRead'];
export type PrometheusSourceCreate = S['PrometheusSourceCreate'];
export type PrometheusTestReport = S['ConnectionTestRead'];
export type PrometheusBackfill = S['BackfillRead'];
export type SourceHealth = S['SourceHealth'];

export const sourcesKeys = {
  all: ['sources'] as const,
  awsList: awsConnectionsKey,
  aws: (id: string) => ['sources', 'aws', id] as const,
  awsBackfill: (id: string) => ['sources', 'aws', id, 'backfill'] as const,
  awsSweeps: (id: string) => ['sources', 'aws', id, 'sweeps'] as const,
  promList: prometheusSourcesKey,
  prom: (id: string) => ['sources', 'prometheus', id] as const,
  promBackfill: (id: string) => ['sources', 'prometheus', id, 'backfill'] as const,
  org: ['sources', 'org'] as const,
  awsSetup: ['sources', 'aws-setup'] as const,
};

// How often a running backfill's progress is re-read; the ingest job commits progress per request batch.
const BACKFILL_POLL_MS = 3_000;

export { awsConnectionsQuery, prometheusSourcesQuery };

export function useAwsConnections() {
  return useQuery(awsConnectionsQuery());
}

export function usePrometheusSources() {
  return useQuery(prometheusSourcesQuery());
}

/** The organisation, for its AWS external ID (the trust policy's sts:ExternalId condition). */
/** The external ID, Headroom's AWS account ID (null when the installation has not set it) and the role templates
 * filled in with both, for the Connect AWS page. */
export function useAwsSetup() {
  return useQuery({
    queryKey: sourcesKeys.awsSetup,
    queryFn: () => unwrap(api.GET('/api/v1/sources/aws/setup')),
  });
}

export function useAwsConnection(id: string) {
  return useQuery({
    queryKey: sourcesKeys.aws(id),
    queryFn: () => unwrap(api.GET('/api/v1/sources/aws/{connection_id}', { params: { path: { connection_id: id } } })),
  });
}

export function usePrometheusSource(id: string) {
  return useQuery({
    queryKey: sourcesKeys.prom(id),
    queryFn: () =>
      unwrap(api.GET('/api/v1/sources/prometheus/{source_id}', { params: { path: { source_id: id } } })),
  });
}

export function useCreateAwsConnection() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: AwsConnectionCreate) => unwrap(api.POST('/api/v1/sources/aws', { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: sourcesKeys.awsList }),
  });
}

export function useCreatePrometheusSource() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: PrometheusSourceCreate) => unwrap(api.POST('/api/v1/sources/prometheus', { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: sourcesKeys.promList }),
  });
}

export function useDeleteAwsConnection() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(api.DELETE('/api/v1/sources/aws/{connection_id}', { params: { path: { connection_id: id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: sourcesKeys.awsList }),
  });
}

export function useDeletePrometheusSource() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(api.DELETE('/api/v1/sources/prometheus/{source_id}', { params: { path: { source_id: id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: sourcesKeys.promList }),
  });
}

/** Run the AWS permission test; the result also updates the connection's health, so refresh it. */
export function useTestAwsConnection(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () =>
      unwrap(api.POST('/api/v1/sources/aws/{connection_id}/test', { params: { path: { connection_id: id } } })),
    onSettled: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: sourcesKeys.aws(id), exact: true }),
        queryClient.invalidateQueries({ queryKey: sourcesKeys.awsList, exact: true }),
        // a first passing test starts the history import
        queryClient.invalidateQueries({ queryKey: sourcesKeys.awsBackfill(id), exact: true }),
      ]),
  });
}

export function useTestPrometheusSource(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () =>
      unwrap(api.POST('/api/v1/sources/prometheus/{source_id}/test', { params: { path: { source_id: id } } })),
    onSettled: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: sourcesKeys.prom(id), exact: true }),
        queryClient.invalidateQueries({ queryKey: sourcesKeys.promList, exact: true }),
      ]),
  });
}

const RUNNING = new Set(['queued', 'running']);

export function useAwsBackfill(id: string) {
  return useQuery({
    queryKey: sourcesKeys.awsBackfill(id),
    queryFn: () =>
      unwrap(api.GET('/api/v1/sources/aws/{connection_id}/backfill', { params: { path: { connection_id: id } } })),
    refetchInterval: (query) => (RUNNING.has(query.state.data?.state ?? '') ? BACKFILL_POLL_MS : false),
  });
}

export function useStartAwsBackfill(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (days: number) =>
      unwrap(
        api.POST('/api/v1/sources/aws/{connection_id}/backfill', {
          params: { path: { connection_id: id } },
          body: { days },
        }),
      ),
    onSuccess: (data) => queryClient.setQueryData(sourcesKeys.awsBackfill(id), data),
  });
}

export function usePrometheusBackfill(id: string) {
  return useQuery({
    queryKey: sourcesKeys.promBackfill(id),
    queryFn: () =>
      unwrap(
        api.GET('/api/v1/sources/prometheus/{source_id}/backfill', { params: { path: { source_id: id } } }),
      ),
    refetchInterval: (query) => (RUNNING.has(query.state.data?.status ?? '') ? BACKFILL_POLL_MS : false),
  });
}

export function useStartPrometheusBackfill(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (days: number) =>
      unwrap(
        api.POST('/api/v1/sources/prometheus/{source_id}/backfill', {
          params: { path: { source_id: id } },
          body: { days },
        }),
      ),
    onSuccess: (data) => queryClient.setQueryData(sourcesKeys.promBackfill(id), data),
  });
}

export function useAwsSweeps(id: string) {
  return useQuery({
    queryKey: sourcesKeys.awsSweeps(id),
    queryFn: () =>
      unwrap(
        api.GET('/api/v1/sources/aws/{connection_id}/sweeps', {
          params: { path: { connection_id: id }, query: { limit: 50 } },
        }),
      ),
  });
}
