/** Data for the settings pages' tests, shaped like the API's answers (frontend/openapi.json). */
import type { components } from '@/api/schema';

type S = components['schemas'];

export const AWS_ID = 'a0000000-0000-4000-8000-000000000001';
export const PROM_ID = 'b0000000-0000-4000-8000-000000000002';
export const EXTERNAL_ID = 'headroom-7f3a9c2e1b';

export const HEALTH_OK: S['SourceHealth'] = {
  status: 'ok',
  last_success_at: '2026-11-21T09:30:00Z',
  last_error_at: null,
  last_error: null,
  consecutive_failures: 0,
};

export const HEALTH_FAILING: S['SourceHealth'] = {
  status: 'failing',
  last_success_at: '2026-11-20T08:00:00Z',
  last_error_at: '2026-11-21T09:31:00Z',
  last_error: 'ConnectError: [Errno 111] Connection refused',
  consecutive_failures: 3,
};

export const AWS_CONNECTION: S['AwsConnectionRead'] = {
  id: AWS_ID,
  name: 'prod-account',
  auth_kind: 'assume_role',
  role_arn: 'arn:aws:iam::123456789012:role/HeadroomReadOnly',
  external_id: EXTERNAL_ID,
  regions: ['us-east-1', 'eu-west-1'],
  access_key_id: null,
  has_secret: false,
  health: HEALTH_OK,
  created_at: '2026-11-20T10:00:00Z',
};

export const PROM_SOURCE: S['PrometheusSourceRead'] = {
  id: PROM_ID,
  name: 'prod-prometheus',
  base_url: 'http://127.0.0.1:9/',
  label_selector: 'tidb_cluster="tidb-prod"',
  auth_kind: 'none',
  username: null,
  has_secret: false,
  cluster_id: null,
  health: HEALTH_FAILING,
  created_at: '2026-11-20T10:00:00Z',
};

export const ORG: S['OrganizationDetailRead'] = {
  id: '0b8f8b58-4a0a-4c57-a0a5-6c7d8e9f0a1b',
  name: 'Analytical Engines',
  slug: 'analytical-engines',
  aws_external_id: EXTERNAL_ID,
  created_at: '2026-11-01T10:00:00Z',
};

export const AWS_BACKFILL_RUNNING: S['AwsBackfillRead'] = {
  state: 'running',
  days: 14,
  points_done: 1200,
  points_total: 4800,
  points_written: 1100,
  started_at: '2026-11-21T09:00:00Z',
  finished_at: null,
  last_error: null,
  queued: false,
};

export const PROM_BACKFILL_NONE: S['BackfillRead'] = {
  status: 'none',
  steps_done: 0,
  steps_total: 0,
  percent: 0,
  points_written: 0,
  dropped_non_finite: 0,
  dropped_outside: 0,
  range_start_at: null,
  range_end_at: null,
  started_at: null,
  finished_at: null,
  last_error: null,
  queued: false,
};

export function sweep(over: Partial<S['CollectionSweepRead']>): S['CollectionSweepRead'] {
  return {
    id: 1,
    kind: 'incremental',
    region: 'us-east-1',
    started_at: '2026-11-21T09:30:00Z',
    finished_at: '2026-11-21T09:30:02Z',
    window_start_at: '2026-11-21T09:25:00Z',
    window_end_at: '2026-11-21T09:30:00Z',
    series: 600,
    api_calls: 2,
    planned_calls: 2,
    lower_bound_calls: 2,
    metrics_requested: 600,
    datapoints: 3000,
    points_written: 3000,
    dropped: 0,
    retries: 0,
    error: null,
    ...over,
  };
}
