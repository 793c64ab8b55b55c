import { tikvNode } from '@/lib/change';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '@/api/client';
import { toApiError, unwrap } from '@/api/errors';
import type { paths } from '@/api/schema';
import { downloadText } from '@/lib/download';

type PatchOp = paths['/api/v1/clusters/{cluster_id}/patches/{patch_id}']['get'];
export type Patch = PatchOp['responses'][200]['content']['application/json'];
export type PatchFormat = Patch['formats'][number];
export type PatchCreate = NonNullable<paths['/api/v1/clusters/{cluster_id}/patches']['post']['requestBody']>['content']['application/json'];

export const patchesKey = (clusterId: string) => ['patches', clusterId] as const;

export function usePatches(clusterId: string) {
  return useQuery({
    queryKey: [...patchesKey(clusterId), 'list'],
    queryFn: () =>
      unwrap(api.GET('/api/v1/clusters/{cluster_id}/patches', { params: { path: { cluster_id: clusterId } } })),
  });
}

export function usePatch(clusterId: string, patchId: string) {
  return useQuery({
    queryKey: [...patchesKey(clusterId), patchId],
    // The same operation also serves the artefacts (toml, diff, ...), so openapi-fetch cannot narrow the body:
    // without ?format it is the PatchRead JSON.
    queryFn: async () =>
      (await unwrap(
        api.GET('/api/v1/clusters/{cluster_id}/patches/{patch_id}', {
          params: { path: { cluster_id: clusterId, patch_id: patchId } },
        }),
      )) as Patch,
  });
}

export function useCreatePatch(clusterId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: PatchCreate) =>
      unwrap(api.POST('/api/v1/clusters/{cluster_id}/patches', { params: { path: { cluster_id: clusterId } }, body })),
    onSuccess: (patch) => {
      queryClient.setQueryData([...patchesKey(clusterId), patch.id], patch);
      void queryClient.invalidateQueries({ queryKey: [...patchesKey(clusterId), 'list'] });
      // A finding lists the patches made from it.
      void queryClient.invalidateQueries({ queryKey: ['finding'] });
    },
  });
}

export function useMarkApplied(clusterId: string, patchId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/v1/clusters/{cluster_id}/patches/{patch_id}/applied', {
          params: { path: { cluster_id: clusterId, patch_id: patchId } },
        }),
      ),
    onSuccess: (patch) => {
      queryClient.setQueryData([...patchesKey(clusterId), patch.id], patch);
      void queryClient.invalidateQueries({ queryKey: [...patchesKey(clusterId), 'list'] });
    },
  });
}

export interface Artefact {
  text: string;
  /** The bytes of a binary artefact (format=configs, a zip); text is then empty. */
  blob?: Blob;
  filename: string;
  contentType: string;
  /** What to know before running it (X-Headroom-Notes), e.g. a change the file's own settings cancel. */
  notes: string[];
}

/** The notes a download carries in X-Headroom-Notes (a JSON list of strings); none when absent or unreadable. */
export function artefactNotes(headers: Headers): string[] {
  try {
    const notes: unknown = JSON.parse(headers.get('X-Headroom-Notes') ?? '[]');
    return Array.isArray(notes) ? notes.filter((n): n is string => typeof n === 'string') : [];
  } catch {
    return [];
  }
}

/** The API error of a download read as text: its JSON body parsed when it is JSON (else the status explains it). */
function downloadError(status: number, error: unknown) {
  let body: unknown = error;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      // not JSON: the status alone explains it
    }
  }
  return toApiError(status, body);
}

/** The file name a Content-Disposition header names, else a fallback. */
export function attachmentName(header: string | null, fallback: string): string {
  const match = header ? /filename="?([^";]+)"?/i.exec(header) : null;
  return match?.[1] ?? fallback;
}

/** Fetch one artefact of a patch (toml, diff, tiup, ...) as text, with the name the server gives the file; with
 * `rollback`, its undo as a file of the same format (a diff's undo is a diff, the SQL's is SQL). */
export async function fetchArtefact(
  clusterId: string,
  patchId: string,
  format: PatchFormat,
  node?: string,
  rollback = false,
): Promise<Artefact> {
  const result = await api.GET('/api/v1/clusters/{cluster_id}/patches/{patch_id}', {
    params: {
      path: { cluster_id: clusterId, patch_id: patchId },
      query: { format, node: node ?? null, ...(rollback ? { rollback: true } : {}) },
    },
    parseAs: format === 'configs' ? 'blob' : 'text',
  });
  if (!result.response.ok) throw downloadError(result.response.status, result.error);
  return {
    text: typeof result.data === 'string' ? result.data : '',
    blob: result.data instanceof Blob ? result.data : undefined,
    filename: attachmentName(result.response.headers.get('Content-Disposition'), `patch-${format}.txt`),
    contentType: result.response.headers.get('Content-Type') ?? 'text/plain',
    notes: artefactNotes(result.response.headers),
  };
}

export function useArtefact(clusterId: string, patchId: string, format: PatchFormat, node?: string) {
  return useQuery({
    queryKey: [...patchesKey(clusterId), patchId, 'artefact', format, node ?? null],
    queryFn: () => fetchArtefact(clusterId, patchId, format, node),
  });
}

/** Save an artefact as a file in the browser. */
export function saveArtefact(artefact: Artefact): void {
  downloadText(artefact.blob ?? artefact.text, artefact.filename, artefact.contentType);
}

/** Names of the organisation's members by user id, for "created by"; empty when the list is not readable. */
export function useMemberNames() {
  return useQuery({
    queryKey: ['patches', 'member-names'],
    queryFn: async () => {
      try {
        const members = await unwrap(api.GET('/api/v1/org/members'));
        return Object.fromEntries(members.map((m) => [m.user_id, m.full_name || m.email]));
      } catch {
        return {} as Record<string, string>;
      }
    },
  });
}

/** The TiKV nodes (status addresses) whose tikv.toml the patch changes, in order: the server's list, which
 * counts a cluster-wide change on every node. */
export function patchNodes(patch: Patch): string[] {
  return patch.nodes.map((n) => n.status_address);
}

/** How a node of the patch is shown: its store address (the status address when none is known). */
/**
 * The nodes whose values before the patch differ for some key it changes (each node's rollback restores its own),
 * by status address; empty when every node ran the same values (one rollback file serves them all).
 */
export function rollbackNodes(patch: Patch): string[] {
  const byKey = new Map<string, Map<string, string>>();
  for (const change of patch.changes) {
    const node = change.target === 'tikv' ? tikvNode(change.entity) : null;
    if (!node) continue;
    const values = byKey.get(change.key) ?? new Map<string, string>();
    values.set(node, JSON.stringify(change.current ?? null));
    byKey.set(change.key, values);
  }
  const nodes = new Set<string>();
  for (const values of byKey.values()) {
    if (new Set(values.values()).size > 1) for (const node of values.keys()) nodes.add(node);
  }
  return [...nodes].sort((a, b) => a.localeCompare(b));
}

export function patchNodeLabel(patch: Patch, statusAddress: string): string {
  return patch.nodes.find((n) => n.status_address === statusAddress)?.address ?? statusAddress;
}

export interface OwnFilePatch extends Artefact {
  /** The kubectl command that applies it (operator); empty for a topology. */
  command: string;
}

export type OwnFileKind = 'operator' | 'tiup';

/** Patch the user's own file: a TidbCluster / TiKVGroup manifest (operator) or a TiUP topology (tiup); only the
 * patch's tikv keys change in it. */
export async function fetchOwnFilePatch(
  kind: OwnFileKind,
  clusterId: string,
  patchId: string,
  text: string,
): Promise<OwnFilePatch> {
  const path = { cluster_id: clusterId, patch_id: patchId };
  const result =
    kind === 'operator'
      ? await api.POST('/api/v1/clusters/{cluster_id}/patches/{patch_id}/operator', {
          params: { path },
          body: { manifest: text },
          parseAs: 'text',
        })
      : await api.POST('/api/v1/clusters/{cluster_id}/patches/{patch_id}/tiup', {
          params: { path },
          body: { topology: text },
          parseAs: 'text',
        });
  if (!result.response.ok) throw downloadError(result.response.status, result.error);
  const headers = result.response.headers;
  const notes = artefactNotes(headers);
  return {
    text: typeof result.data === 'string' ? result.data : '',
    filename: attachmentName(headers.get('Content-Disposition'), kind === 'tiup' ? 'topology.yaml' : 'patch.json'),
    contentType: headers.get('Content-Type') ?? 'text/plain',
    command: headers.get('X-Headroom-Apply-Command') ?? '',
    notes,
  };
}
