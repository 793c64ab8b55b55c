"""Patches: generate a patch from findings, list and read them, download each artefact, and record
that a patch was applied."""

from __future__ import annotations

import json
import uuid

from fastapi import APIRouter, Query, Response, status

from headroom.api.deps import DB, Caller, Context
from headroom.patches import service
from headroom.patches.schemas import (
    OperatorManifest,
    PatchCreate,
    PatchFormat,
    PatchList,
    PatchRead,
    RemovedFormat,
    TiupTopology,
)

router = APIRouter(prefix="/clusters/{cluster_id}/patches", tags=["patches"])
_DOWNLOADS = {"200": {"description": "PatchRead JSON, or with ?format= the artefact as an attachment; what the "
                                     "user must know before running it is a JSON list of strings in "
                                     "X-Headroom-Notes.",
                      "content": {"application/toml": {}, "text/x-diff": {}, "application/yaml": {},
                                  "application/sql": {}, "text/x-shellscript": {}, "text/plain": {},
                                  "application/zip": {}}}}


@router.post("", status_code=status.HTTP_201_CREATED, response_model=PatchRead)
def create_patch(cluster_id: uuid.UUID, body: PatchCreate, caller: Caller, db: DB, ctx: Context) -> PatchRead:
    """Store a patch of the findings' changes against a config version, current values filled in (admin)."""
    row = service.create_patch(db, caller, cluster_id, finding_ids=body.finding_ids, base_config=body.base_config,
                               options=body.options, now=ctx.clock())
    return service.patch_read(db, row)


@router.get("", response_model=PatchList)
def list_patches(cluster_id: uuid.UUID, caller: Caller, db: DB) -> PatchList:
    """List the cluster's patches, newest first."""
    rows = service.list_patches(db, caller, cluster_id)
    return PatchList(items=service.patch_reads(db, rows), total=len(rows))


@router.get("/{patch_id}", response_model=PatchRead, responses=_DOWNLOADS)  # type: ignore[arg-type]
def get_patch(
    cluster_id: uuid.UUID,
    patch_id: uuid.UUID,
    caller: Caller,
    db: DB,
    format: PatchFormat | RemovedFormat | None = Query(
        default=None, description="Download this artefact instead of the metadata. `rollback` (a bundle of every "
        "format's undo, removed) answers 400: ask for a format with rollback=true instead."),
    node: str | None = Query(default=None, description="One node's file (store or status address): toml, operator, "
                             "merged, diff. merged and diff need it when the patch changes several nodes; the toml "
                             "and operator rollbacks (one value per key) when the nodes ran different values before "
                             "the patch (tiup, sql and tikv-ctl restore each node's own value in one file). An "
                             "unknown node answers 422 naming the node field."),
    rollback: bool = Query(default=False, description="The artefact's undo, in the same format as the artefact (a "
                           "diff, SQL, a script, ...): run it the same way to go back to the values before the patch."),
) -> object:
    """Read the patch, or download it as an artefact (merged/diff patch the node's stored config)."""
    if format is None:
        return service.patch_read(db, service.get_patch(db, caller, cluster_id, patch_id))
    rendered = service.render_patch(db, caller, cluster_id, patch_id, format, node=node, rollback=rollback)
    art = rendered.artefact
    headers = {"Content-Disposition": f'attachment; filename="{art.filename}"',
               "X-Headroom-Notes": json.dumps(list(art.notes))}
    if rendered.config_source is not None:
        # uploaded: the stored tikv.toml as written; rebuilt: a TOML made from the live /config JSON
        headers["X-Headroom-Config-Source"] = rendered.config_source
    return Response(content=rendered.content, media_type=art.media_type, headers=headers)


@router.post(
    "/{patch_id}/operator",
    responses={200: {"description": "The patch file: a JSON patch (config map) or a YAML merge patch (TOML string).",
                     "content": {"application/json-patch+json": {}, "application/merge-patch+yaml": {}}}},
)
def operator_patch(
    cluster_id: uuid.UUID, patch_id: uuid.UUID, body: OperatorManifest, caller: Caller, db: DB
) -> Response:
    """Patch your own TidbCluster or TiKVGroup: only the proposed tikv keys change, every other key stays.

    A YAML-map spec.tikv.config gets a JSON patch on the exact paths (kubectl patch --type json); a TOML string gets
    the whole string updated in place (--type merge). The kubectl command is in X-Headroom-Apply-Command."""
    patched = service.render_operator_manifest(db, caller, cluster_id, patch_id, body.manifest, rollback=body.rollback)
    json_form = patched.patch_type == "json"
    name = f"{patched.name}-tikv-config{'-rollback' if body.rollback else ''}.{'json' if json_form else 'yaml'}"
    return Response(
        content=patched.body,
        media_type="application/json-patch+json" if json_form else "application/merge-patch+yaml",
        headers={"Content-Disposition": f'attachment; filename="{name}"', "X-Headroom-Apply-Command": patched.command},
    )


@router.post(
    "/{patch_id}/tiup",
    responses={200: {"description": "Your topology with the changes made in place (YAML); notes in X-Headroom-Notes.",
                     "content": {"application/yaml": {}}}},
)
def tiup_topology(cluster_id: uuid.UUID, patch_id: uuid.UUID, body: TiupTopology, caller: Caller, db: DB) -> Response:
    """Patch your own TiUP topology: each value lands where TiUP reads it (an instance's own config wins over
    server_configs.tikv, so a cluster-wide change is made there too), one spelling per key, comments kept.
    Apply it with the command in X-Headroom-Apply-Command: `tiup cluster edit-config <name> --topology-file
    topology.yaml && tiup cluster reload <name> -R tikv`."""
    edited = service.render_tiup_topology(db, caller, cluster_id, patch_id, body.topology, rollback=body.rollback)
    name = service.tiup_topology_file_name(rollback=body.rollback)
    notes = json.dumps(list(edited.notes))
    return Response(content=edited.text, media_type="application/yaml",
                    headers={"Content-Disposition": f'attachment; filename="{name}"', "X-Headroom-Notes": notes,
                             "X-Headroom-Apply-Command": edited.command})


@router.post("/{patch_id}/applied", response_model=PatchRead)
def mark_applied(cluster_id: uuid.UUID, patch_id: uuid.UUID, caller: Caller, db: DB, ctx: Context) -> PatchRead:
    """Record that the patch was applied, when and by whom (admin)."""
    return service.patch_read(db, service.mark_applied(db, caller, cluster_id, patch_id, now=ctx.clock()))
