import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '@/api/client';
import { unwrap } from '@/api/errors';
import type { components } from '@/api/schema';
import { getApplySettings } from './requests';

type S = components['schemas'];
export type OrgApplySettings = S['OrgApplySettingsRead'];
export type OrgApplySettingsUpdate = S['OrgApplySettingsUpdate'];
export type ClusterApplySettings = S['ClusterApplySettingsRead'];
export type ApplyPlanPreview = S['ApplyPlanPreview'];
export type ApplyPlan = S['ApplyPlanRead'];
export type PlanStep = S['PlanStep'];
export type StepRun = S['StepRunRead'];
export type MaintenanceWindow = S['MaintenanceWindow'];

const keys = {
  org: ['apply', 'org'] as const,
  templates: ['apply', 'templates'] as const,
  cluster: (clusterId: string) => ['apply', 'cluster', clusterId] as const,
  preview: (findingId: string) => ['apply', 'preview', findingId] as const,
  plans: (clusterId: string) => ['apply', 'plans', clusterId] as const,
};

export function useOrgApplySettings() {
  return useQuery({ queryKey: keys.org, queryFn: () => unwrap(api.GET('/api/v1/org/apply-settings')) });
}

export function useSetOrgApplySettings() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: OrgApplySettingsUpdate) => unwrap(api.PUT('/api/v1/org/apply-settings', { body })),
    onSuccess: (data) => {
      queryClient.setQueryData(keys.org, data);
      void queryClient.invalidateQueries({ queryKey: ['apply'] });
    },
  });
}

/** The kill switch: stop every running plan of the organisation (admins and owners). */
export function useStopAllPlans() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/org/apply-stop')),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['apply'] }),
  });
}

export function useApplyRoleTemplates() {
  return useQuery({ queryKey: keys.templates, queryFn: () => unwrap(api.GET('/api/v1/sources/aws/apply-setup')) });
}

export function clusterApplySettingsQuery(clusterId: string) {
  return queryOptions({
    queryKey: keys.cluster(clusterId),
    queryFn: () =>
      unwrap(getApplySettings(api, clusterId)),
  });
}

export function useClusterApplySettings(clusterId: string) {
  return useQuery(clusterApplySettingsQuery(clusterId));
}

export function useSetClusterApplySettings(clusterId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (enabled: boolean) =>
      unwrap(
        api.PUT('/api/v1/clusters/{cluster_id}/apply-settings', {
          params: { path: { cluster_id: clusterId } },
          body: { enabled },
        }),
      ),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['apply'] }),
  });
}

export function useApplyPlanPreview(findingId: string) {
  return useQuery({
    queryKey: keys.preview(findingId),
    queryFn: () =>
      unwrap(api.GET('/api/v1/findings/{finding_id}/apply-plan', { params: { path: { finding_id: findingId } } })),
  });
}

/** How often the plans are read again while one of them runs (its steps' status is live). */
export const RUNNING_POLL_MS = 3000;

export function useApplyPlans(clusterId: string) {
  return useQuery({
    queryKey: keys.plans(clusterId),
    queryFn: () =>
      unwrap(api.GET('/api/v1/clusters/{cluster_id}/apply-plans', { params: { path: { cluster_id: clusterId } } })),
    refetchInterval: (query) =>
      query.state.data?.some((p) => p.status === 'running' || p.step_runs.some((s) => s.status === 'undoing'))
        ? RUNNING_POLL_MS
        : false,
  });
}

/** Run an approved plan, stop a running one, or confirm its volumes' undo. */
export function usePlanAction() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ planId, action }: { planId: string; action: 'run' | 'stop' | 'undo' }) => {
      const params = { params: { path: { plan_id: planId } } };
      if (action === 'run') return unwrap(api.POST('/api/v1/apply-plans/{plan_id}/run', params));
      if (action === 'stop') return unwrap(api.POST('/api/v1/apply-plans/{plan_id}/stop', params));
      return unwrap(api.POST('/api/v1/apply-plans/{plan_id}/undo', params));
    },
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['apply'] }),
  });
}

/** What a user can still undo: applied TiKV settings (at once), a TiKV setting whose rollback or undo failed (it
 * was sent and read back, and may still hold the run's value: the backend offers its undo again, as
 * headroom.apply.run confirm_undo does), and volume changes (from `earliest`, as AWS allows one modification of a
 * volume every six hours). */
export function pendingUndo(plan: ApplyPlan): { positions: number[]; settings: number[]; earliest: string | null } {
  const volumes = new Set(plan.steps.filter((s) => s.kind === 'ebs_modify_volume').map((s) => s.position));
  const open = plan.step_runs.filter((r) => !r.undo_confirmed_at);
  const done = open.filter((r) => r.status === 'done');
  const waiting = done.filter((r) => volumes.has(r.position) && r.undo_not_before);
  const settings = open
    .filter((r) => !volumes.has(r.position) && (r.status === 'done' || (r.status === 'failed' && r.read_back !== null)))
    .map((r) => r.position);
  const earliest = waiting.map((r) => r.undo_not_before as string).sort().at(-1) ?? null;
  return { positions: waiting.map((r) => r.position), settings, earliest };
}

/** The undo button's words: what it sets back. */
export function undoLabel(undo: { positions: number[]; settings: number[] }): string {
  const plural = (n: number) => (n === 1 ? '' : 's');
  if (undo.settings.length && undo.positions.length) return 'Undo the changes';
  if (undo.settings.length) return `Undo setting change${plural(undo.settings.length)}`;
  return `Undo volume change${plural(undo.positions.length)}`;
}

export function useProposePlan(clusterId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: S['ApplyPlanCreate']) =>
      unwrap(
        api.POST('/api/v1/clusters/{cluster_id}/apply-plans', { params: { path: { cluster_id: clusterId } }, body }),
      ),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['apply'] }),
  });
}

export function useDecidePlan() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ planId, decision }: { planId: string; decision: 'approve' | 'reject' }) =>
      decision === 'approve'
        ? unwrap(api.POST('/api/v1/apply-plans/{plan_id}/approve', { params: { path: { plan_id: planId } }, body: {} }))
        : unwrap(api.POST('/api/v1/apply-plans/{plan_id}/reject', { params: { path: { plan_id: planId } }, body: {} })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['apply'] }),
  });
}

/** A step's undo delay in words. */
export function undoText(seconds: number): string {
  if (seconds === 0) return 'at once';
  const hours = seconds / 3600;
  return Number.isInteger(hours) ? `after ${hours} hours` : `after ${Math.round(seconds / 60)} minutes`;
}
