import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '@/api/client';
import { unwrap } from '@/api/errors';
import type { components } from '@/api/schema';

type S = components['schemas'];
export type OrgApplySettings = S['OrgApplySettingsRead'];
export type OrgApplySettingsUpdate = S['OrgApplySettingsUpdate'];
export type ClusterApplySettings = S['ClusterApplySettingsRead'];
export type ApplyPlanPreview = S['ApplyPlanPreview'];
export type ApplyPlan = S['ApplyPlanRead'];
export type PlanStep = S['PlanStep'];
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

export function useApplyRoleTemplates() {
  return useQuery({ queryKey: keys.templates, queryFn: () => unwrap(api.GET('/api/v1/sources/aws/apply-setup')) });
}

export function useClusterApplySettings(clusterId: string) {
  return useQuery({
    queryKey: keys.cluster(clusterId),
    queryFn: () =>
      unwrap(api.GET('/api/v1/clusters/{cluster_id}/apply-settings', { params: { path: { cluster_id: clusterId } } })),
  });
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

export function useApplyPlans(clusterId: string) {
  return useQuery({
    queryKey: keys.plans(clusterId),
    queryFn: () =>
      unwrap(api.GET('/api/v1/clusters/{cluster_id}/apply-plans', { params: { path: { cluster_id: clusterId } } })),
  });
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
