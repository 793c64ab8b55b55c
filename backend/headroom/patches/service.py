"""Patches: accepted findings' changes, stored against a config version, rendered as the artefacts a user
applies (headroom.domain.tikvconf.render). Callers commit.

A patch records who generated it, from which findings, against which config (`base_config_id`), its changes
(the findings' stored domain Changes, each labelled with its finding in `change_sources`) with their nodes
resolved to status addresses and a tikv change's current value read from the config the patch is made against
(tikvconf.fill_current with rebase: that value is what the rollback restores), and notes (version warnings,
unknown current values, which file merged/diff will use). Rendering is reproducible: a node's config is the
version it had when the patch was made.

merged/diff need the node's tikv.toml: the stored raw text when the config was uploaded as a file, else a TOML
rebuilt from the live `/config` JSON (values only: no comments, every key TiKV reported).
"""

from __future__ import annotations

import datetime as dt
import io
import re
import uuid
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import tomlkit
from sqlalchemy import any_, select
from sqlalchemy.orm import Session

from headroom.accounts.service import Principal, audit
from headroom.clusters import service as clusters_service
from headroom.clusters.models import Cluster
from headroom.domain.model import Change, severity_rank
from headroom.domain.tikvconf import (
    FORMATS,
    ROLLBACK_HELP,
    Artefact,
    ConfigParseError,
    HostFacts,
    PatchConflict,
    PatchTarget,
    TikvConfError,
    UnknownConfigKey,
    UnknownFormat,
    artefact,
    artefacts,
    config_json_view,
    effective_value,
    fill_current,
    pd_url_of,
    resolve_nodes,
    target_node,
)
from headroom.domain.tikvconf import Patch as ConfPatch
from headroom.domain.snapshot.views import data_mount
from headroom.domain.tikvconf.keys import check_value
from headroom.domain.tikvconf.operator import OperatorPatch, patch_manifest, rollback_manifest
from headroom.domain.tikvconf.render import file_slug
from headroom.domain.tikvconf.tiup import TopologyPatch, patch_topology, rollback_topology
from headroom.findings import service as findings_service
from headroom.findings.service import StoredFinding
from headroom.inventory.models import Instance, TikvConfig, TikvNode
from headroom.patches.models import PatchRecord
from headroom.patches.schemas import BaseConfigRead, PatchNodeRead, PatchRead
from headroom.platform.errors import AppError, Conflict, InvalidInput, NotFound
from headroom.timeseries.snapshots import latest_configs, node_filesystems

GIB = 1024**3
ACTIVE_FOR_PATCH = ("open", "acknowledged")
ConfigSource = Literal["uploaded", "rebuilt"]


class BadFormat(AppError):
    status_code = 400
    code = "unknown_format"


@dataclass(frozen=True)
class _NodeInfo:
    row: TikvNode
    node: PatchTarget
    host: HostFacts


def _nodes(db: Session, cluster: Cluster) -> list[_NodeInfo]:
    rows = list(db.scalars(select(TikvNode).where(TikvNode.org_id == cluster.org_id,
                                                  TikvNode.cluster_id == cluster.id).order_by(TikvNode.store_address)))
    refs = [r.instance_ref_id for r in rows if r.instance_ref_id is not None]
    instances = {i.id: i for i in db.scalars(select(Instance).where(Instance.org_id == cluster.org_id,
                                                                     Instance.id.in_(refs)))}
    out = []
    for r in rows:
        inst = instances.get(r.instance_ref_id) if r.instance_ref_id is not None else None
        status_address = r.status_address or f"{r.store_address.rpartition(':')[0] or r.store_address}:20180"
        out.append(_NodeInfo(
            r,
            PatchTarget(status_address=status_address, address=r.store_address,
                        instance_id=inst.instance_id if inst else None, name=r.store_address, store_id=r.store_id),
            HostFacts(cpus=inst.vcpus if inst else None,
                      memory_bytes=int(inst.memory_gib * GIB) if inst and inst.memory_gib else None),
        ))
    return out


def _with_data_filesystems(db: Session, cluster: Cluster, nodes: Sequence[_NodeInfo]) -> tuple[PatchTarget, ...]:
    """The nodes with the mount holding each one's storage.data-dir and its filesystem type, as node_exporter reported
    them: the AWS script's filesystem step checks them on the host (docs/reference/filesystem-grow.md)."""
    filesystems = node_filesystems(db, cluster.org_id, cluster.id)
    configs = latest_configs(db, cluster.org_id, [n.row.id for n in nodes])
    out = []
    for n in nodes:
        mounts = filesystems.get(n.row.store_address, {})
        config = configs.get(n.row.id)
        data_dir = config_json_view(config.config).get("storage.data-dir") if config is not None else None
        mount = data_mount(data_dir, list(mounts))
        out.append(n.node.model_copy(update={"data_mount": mount, "data_fstype": mounts.get(mount) if mount else None}))
    return tuple(out)


def _region(db: Session, cluster: Cluster, nodes: Sequence[_NodeInfo]) -> str | None:
    """The AWS region of the cluster's instances when they agree on one (the AWS script passes it to every call)."""
    refs = [n.row.instance_ref_id for n in nodes if n.row.instance_ref_id is not None]
    regions = set(db.scalars(select(Instance.region).where(Instance.org_id == cluster.org_id, Instance.id.in_(refs))))
    regions.discard(None)
    return regions.pop() if len(regions) == 1 else None


def _source(finding: StoredFinding) -> str:
    """The label a patch prints next to a change: the finding's dedup key (it names the rule)."""
    key = finding.dedup_key
    return key if key.startswith(finding.rule) else f"{finding.rule} ({key})"


def _source_titles(db: Session, row: PatchRecord) -> tuple[str, ...]:
    """Each change's finding in words (its title), for the artefacts' comments; "" where the finding is gone."""
    findings = findings_service.findings_by_id(db, row.org_id, list(row.finding_ids)).values()
    title_of = {_source(f): f.title for f in findings}
    return tuple(title_of.get(source, "") for source in row.change_sources)


def _changes_of(db: Session, org_id: uuid.UUID, findings: Sequence[StoredFinding],
                chosen: dict[uuid.UUID, list[Change]] | None = None) -> tuple[list[Change], list[str]]:
    """Return the findings' changes in order (finding, then position) and the finding label of each: the stored
    recommendation (the first option), or the changes of the option `chosen` for the finding."""
    recommended = findings_service.recommended_changes(db, org_id, [f.id for f in findings])
    by_finding = {f.id: list((chosen or {}).get(f.id, recommended.get(f.id, []))) for f in findings}
    changes = [c for f in findings for c in by_finding[f.id]]
    sources = [_source(f) for f in findings for _ in by_finding[f.id]]
    return changes, sources


def _chosen_options(findings: Sequence[StoredFinding], options: dict[uuid.UUID, int]
                    ) -> tuple[dict[uuid.UUID, list[Change]], list[str]]:
    """The changes of each option asked for, and a note per finding with a choice: which option, what it costs."""
    by_id = {f.id: f for f in findings}
    stray = [str(i) for i in options if i not in by_id]
    if stray:
        raise InvalidInput(f"options: {', '.join(stray)} is not one of the selected findings",
                           details={"field": "options"})
    chosen: dict[uuid.UUID, list[Change]] = {}
    notes: list[str] = []
    for finding in findings:
        available = finding.options
        index = options.get(finding.id, 0)
        if finding.id in options and not 0 <= index < len(available):
            raise InvalidInput(f"options: finding {finding.id} has {len(available)} option(s): choose 0 to "
                               f"{max(len(available) - 1, 0)}", details={"field": "options"})
        if finding.id in options:
            chosen[finding.id] = list(available[index].changes)
        if len(available) > 1:
            option = available[index]
            restart = any(c.online is False for c in option.changes)
            # a person reads the note: the finding by its title, not its key
            notes.append(f"{finding.title}: option {index + 1} of {len(available)}, {option.label} "
                         f"({'needs a restart' if restart else 'applies online'}): {option.impact.summary}")
    return chosen, notes


def _select_findings(
    db: Session, cluster: Cluster, finding_ids: Sequence[uuid.UUID] | Literal["all_open"]
) -> list[StoredFinding]:
    if finding_ids == "all_open":
        rows = findings_service.findings_of_cluster(db, cluster.org_id, cluster.id, statuses=ACTIVE_FOR_PATCH)
        if not rows:
            raise InvalidInput("finding_ids: the cluster has no open finding", details={"field": "finding_ids"})
    else:
        wanted = list(dict.fromkeys(finding_ids))
        if not wanted:
            raise InvalidInput("finding_ids: select at least one finding", details={"field": "finding_ids"})
        found = {f.id: f for f in findings_service.findings_of_cluster(db, cluster.org_id, cluster.id, ids=wanted)}
        missing = [str(i) for i in wanted if i not in found]
        if missing:
            raise InvalidInput(f"finding_ids: no finding {', '.join(missing)} in this cluster",
                               details={"field": "finding_ids", "missing": missing})
        rows = [found[i] for i in wanted]
        return rows  # in the order the caller chose
    return sorted(rows, key=lambda f: (severity_rank(f.severity), f.rule, f.entity_id))


def _base_config(
    db: Session, cluster: Cluster, nodes: Sequence[_NodeInfo], base_config: uuid.UUID | Literal["latest"]
) -> tuple[TikvConfig | None, dict[uuid.UUID, TikvConfig]]:
    """Return the base config row and the config each node is read from."""
    configs = latest_configs(db, cluster.org_id, [n.row.id for n in nodes])
    if base_config == "latest":
        # The newest capture; among equals (one collection run) the first node by store address.
        order = {n.row.id: i for i, n in enumerate(nodes)}
        base = max(configs.values(), key=lambda c: (c.captured_at, -order[c.node_id]), default=None)
        return base, configs
    row = db.scalar(select(TikvConfig).where(TikvConfig.id == base_config, TikvConfig.org_id == cluster.org_id))
    if row is None or row.node_id not in {n.row.id for n in nodes}:
        raise InvalidInput(f"base_config: no config {base_config} of a node of this cluster",
                           details={"field": "base_config"})
    return row, {**configs, row.node_id: row}


def _notes(cluster: Cluster, nodes: Sequence[_NodeInfo], configs: dict[uuid.UUID, TikvConfig],
           base: TikvConfig | None, changes: Sequence[Change], findings: Sequence[StoredFinding]) -> list[str]:
    notes: list[str] = [f"From {len(findings)} finding(s): {', '.join(sorted({f.rule for f in findings}))}."]
    by_status = {n.node.status_address: n for n in nodes}
    if base is not None:
        node = next((n for n in nodes if n.row.id == base.node_id), None)
        where = node.node.address if node else str(base.node_id)
        notes.append(f"Base config: node {where}, version {base.version} ({base.source}, captured "
                     f"{base.captured_at:%Y-%m-%d %H:%M} UTC).")
    else:
        notes.append("No node config has been collected: current values come from the version's defaults only, "
                     "and merged/diff cannot be rendered.")
    for n in nodes:
        config = configs.get(n.row.id)
        if config is None:
            continue
        if _toml_text(config) is not None:
            notes.append(f"merged/diff for {n.node.address} use the uploaded tikv.toml (version {config.version}).")
        else:
            notes.append(f"merged/diff for {n.node.address} use a TOML rebuilt from the live /config JSON "
                         f"(version {config.version}, {config.source}): values only, without your file's comments; "
                         "`headroom patch --config tikv.toml` merges into your own file.")
    seen: set[str] = set(notes)
    for change in changes:
        if change.target != "tikv":
            continue
        scope = target_node(change)
        targets = [scope] if scope else list(by_status)
        for status_address in targets:
            info = by_status.get(status_address or "")
            config = configs.get(info.row.id) if info else None
            view = config_json_view(config.config) if config is not None else {}
            version = (info.row.version if info else None) or cluster.tikv_version
            value = effective_value(change.key, view, version, info.host if info else None)
            for warning in value.warnings:
                if warning not in seen:
                    seen.add(warning)
                    notes.append(warning)
        if change.current is None:
            on = by_status[scope].node.address if scope in by_status else scope
            note = (f"{change.key}: the current value on {on or 'every node'} is unknown; "
                    "the rollback removes the key (TiKV falls back to its default).")
            if note not in seen:
                seen.add(note)
                notes.append(note)
    return notes


def create_patch(
    db: Session,
    principal: Principal,
    cluster_id: uuid.UUID,
    *,
    finding_ids: Sequence[uuid.UUID] | Literal["all_open"],
    base_config: uuid.UUID | Literal["latest"],
    now: dt.datetime,
    options: dict[uuid.UUID, int] | None = None,
) -> PatchRecord:
    """Store a patch of the selected findings' changes against a config version (admin); `options` picks, per
    finding, which of its options (0-based) to apply instead of the first."""
    principal.require("admin")
    cluster = clusters_service.get_cluster(db, principal, cluster_id)
    findings = _select_findings(db, cluster, finding_ids)
    chosen, option_notes = _chosen_options(findings, options or {})
    nodes = _nodes(db, cluster)
    base, configs = _base_config(db, cluster, nodes, base_config)
    stored, sources = _changes_of(db, cluster.org_id, findings, chosen)
    if not stored:
        raise InvalidInput("finding_ids: the selected findings propose no change", details={"field": "finding_ids"})
    try:
        views = {n.node.status_address: config_json_view(configs[n.row.id].config)
                 for n in nodes if n.row.id in configs}
        hosts = {n.node.status_address: n.host for n in nodes}
        # A tikv change's current value is the base config's (what the rollback restores), not the one the
        # advisor saw when it ran.
        changes = fill_current(resolve_nodes(stored, [n.node for n in nodes]), views, cluster.tikv_version, hosts,
                               rebase=True)
        for change in changes:
            if change.target == "tikv":
                check_value(change.key, change.proposed)
    except TikvConfError as exc:
        raise _invalid(exc, "finding_ids") from exc
    row = PatchRecord(
        org_id=cluster.org_id,
        cluster_id=cluster.id,
        created_by_user_id=principal.user_id,
        finding_ids=[f.id for f in findings],
        base_config_id=base.id if base is not None else None,
        changes=list(changes),
        change_sources=sources,
        notes=_notes(cluster, nodes, configs, base, changes, findings) + option_notes,
        created_at=now,
    )
    db.add(row)
    db.flush()
    audit(db, principal, "patch.created", target_kind="patch", target_id=row.id,
          details={"cluster_id": str(cluster.id), "findings": len(findings), "changes": len(changes)})
    return row


def list_patches(db: Session, principal: Principal, cluster_id: uuid.UUID) -> list[PatchRecord]:
    cluster = clusters_service.get_cluster(db, principal, cluster_id)
    return list(db.scalars(select(PatchRecord).where(PatchRecord.org_id == principal.org_id, PatchRecord.cluster_id == cluster.id)
                           .order_by(PatchRecord.created_at.desc(), PatchRecord.id)))


def patches_of_finding(db: Session, org_id: uuid.UUID, finding_id: uuid.UUID) -> list[PatchRecord]:
    """Return the org's patches generated from one finding, oldest first (an applied one dates the fix).

    The finding's read lists them (findings.service.PatchesOf): the API's composition root hands this function to
    the findings router, so the findings feature never imports this one back."""
    return list(
        db.scalars(
            select(PatchRecord)
            .where(PatchRecord.org_id == org_id, any_(PatchRecord.finding_ids) == finding_id)
            .order_by(PatchRecord.created_at, PatchRecord.id)
        )
    )


def get_patch(db: Session, principal: Principal, cluster_id: uuid.UUID, patch_id: uuid.UUID,
              *, lock: bool = False) -> PatchRecord:
    """Return the org's patch of that cluster; anything else is NotFound."""
    query = select(PatchRecord).where(PatchRecord.id == patch_id, PatchRecord.org_id == principal.org_id, PatchRecord.cluster_id == cluster_id)
    row = db.scalar(query.with_for_update() if lock else query)
    if row is None:
        raise NotFound("Patch not found.")
    return row


def base_config(db: Session, patch: PatchRecord) -> TikvConfig | None:
    if patch.base_config_id is None:
        return None
    return db.scalar(select(TikvConfig).where(TikvConfig.id == patch.base_config_id,
                                              TikvConfig.org_id == patch.org_id))


def mark_applied(db: Session, principal: Principal, cluster_id: uuid.UUID, patch_id: uuid.UUID,
                 *, now: dt.datetime) -> PatchRecord:
    """Record that the patch was applied, when and by whom (admin); a second call is a Conflict."""
    principal.require("admin")
    row = get_patch(db, principal, cluster_id, patch_id, lock=True)
    if row.applied_at is not None:
        raise Conflict(f"The patch was already marked applied at {row.applied_at.isoformat()}.",
                       code="patch_already_applied")
    row.applied_at, row.applied_by_user_id = now, principal.user_id
    db.flush()
    audit(db, principal, "patch.applied", target_kind="patch", target_id=row.id,
          details={"cluster_id": str(cluster_id)})
    return row


# ---------------------------------------------------------------------------------------------------- render


def toml_from_config(config: dict[str, Any]) -> str:
    """Rebuild a tikv.toml from a nested /config JSON (nulls dropped: TOML has none)."""

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if v is not None}
        if isinstance(value, list):
            return [clean(v) for v in value if v is not None]
        return value

    scalars = {k: v for k, v in clean(config).items() if not isinstance(v, dict)}
    tables = {k: v for k, v in clean(config).items() if isinstance(v, dict)}
    return str(tomlkit.dumps({**scalars, **tables}))


def _invalid(exc: TikvConfError, field: str) -> AppError:
    if isinstance(exc, UnknownFormat):
        return BadFormat(str(exc), details={"field": "format"})
    details: dict[str, Any] = {"field": field}
    if isinstance(exc, ConfigParseError):
        details.update(field="base_config", line=exc.line, column=exc.column)
    elif isinstance(exc, UnknownConfigKey):
        details.update(key=exc.key, suggestions=list(exc.suggestions))
    elif isinstance(exc, PatchConflict):
        details["field"] = "node"
    return InvalidInput(f"{details['field']}: {exc}", details=details)


@dataclass(frozen=True)
class Rendered:
    artefact: Artefact
    config_source: ConfigSource | None
    config_id: uuid.UUID | None
    archive: bytes | None = None  # format=configs: a zip of every changed node's merged file and diff

    @property
    def content(self) -> str | bytes:
        return self.archive if self.archive is not None else self.artefact.body


def _changed_nodes(changes: Sequence[Change], nodes: Sequence[_NodeInfo]) -> list[_NodeInfo]:
    """The nodes whose tikv.toml the patch changes: all of them for a cluster-wide change, else the changes' nodes."""
    targets = {target_node(c) for c in changes if c.target == "tikv"}
    if None in targets:
        return list(nodes)
    return [n for n in nodes if n.node.status_address in targets]


def _where(node: PatchTarget) -> str:
    return node.address or node.status_address


def _node_file_name(node: PatchTarget) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", _where(node))


def _toml_text(config: TikvConfig) -> str | None:
    """The stored text when it is a tikv.toml (an upload of one); a TiUP topology's raw text is YAML, so merged and
    diff use a TOML rebuilt from the node's config read out of it (they failed with a TOML parse error on it)."""
    return config.raw_text if config.raw_text and config.source == "upload" else None


def _config_at(db: Session, patch: PatchRecord, node: TikvNode) -> TikvConfig | None:
    """The node's config when the patch was made: the base config if it is this node's, else the newest then."""
    base = base_config(db, patch)
    if base is not None and base.node_id == node.id:
        return base
    query = select(TikvConfig).where(TikvConfig.org_id == patch.org_id, TikvConfig.node_id == node.id)
    return db.scalar(query.where(TikvConfig.captured_at <= patch.created_at).order_by(TikvConfig.version.desc())
                     .limit(1)) or db.scalar(query.order_by(TikvConfig.version.desc()).limit(1))


def render_patch(
    db: Session,
    principal: Principal,
    cluster_id: uuid.UUID,
    patch_id: uuid.UUID,
    fmt: str,
    *,
    node: str | None = None,
    rollback: bool = False,
) -> Rendered:
    """Render a stored patch as one artefact (for `node`, a store or status address, when given)."""
    if fmt == "rollback":  # the old bundle's links: say what replaced it
        raise AppError(ROLLBACK_HELP, code="format_removed", details={"field": "format", "use": "rollback=true"})
    cluster = clusters_service.get_cluster(db, principal, cluster_id)
    row = get_patch(db, principal, cluster.id, patch_id)
    nodes = _nodes(db, cluster)
    chosen: _NodeInfo | None = None
    if node is not None:
        chosen = next((n for n in nodes if node in (n.node.status_address, n.node.address, n.node.name)), None)
        if chosen is None:
            raise InvalidInput(f"node: no TiKV node {node!r} in this cluster", details={"field": "node"})
    config_text: str | None = None
    source: ConfigSource | None = None
    config_row: TikvConfig | None = None
    changed = _changed_nodes(row.changes, nodes)
    if fmt == "configs":
        return _render_configs(db, row, cluster, nodes, changed, rollback=rollback)
    # merged/diff are one node's file, and only a node the patch changes has one: the node asked for, else the
    # only changed node, else the base config's node when the patch changes it.
    if fmt in ("merged", "diff"):
        names = ", ".join(_where(n.node) for n in changed)
        if not changed:
            raise InvalidInput(f"format: this patch changes no tikv.toml key, so it has no {fmt} file; download "
                               "the aws or terraform format", details={"field": "format"})
        if chosen is not None and chosen not in changed:
            raise InvalidInput(f"node: this patch changes nothing in the tikv.toml of {chosen.node.address}; it "
                               f"changes {names}", details={"field": "node"})
        if chosen is None:
            base = base_config(db, row)
            chosen = next((n for n in changed if base is not None and n.row.id == base.node_id), None)
            if chosen is None and len(changed) == 1:
                chosen = changed[0]
            if chosen is None:
                raise InvalidInput(f"node: this patch changes the tikv.toml of {len(changed)} nodes ({names}): "
                                   "ask for one with ?node=, or for all of them with format=configs",
                                   details={"field": "node"})
        config_row = _config_at(db, row, chosen.row)
        if config_row is not None:
            uploaded = _toml_text(config_row)
            config_text = uploaded if uploaded is not None else toml_from_config(config_row.config)
            source = "uploaded" if uploaded is not None else "rebuilt"
        else:
            raise InvalidInput(f"format: {fmt} needs a stored config of the node; none has been collected",
                               details={"field": "format"})
    patch = ConfPatch(
        cluster=cluster.name,
        tikv_version=cluster.tikv_version,
        nodes=_with_data_filesystems(db, cluster, nodes),
        changes=tuple(row.changes),
        sources=tuple(row.change_sources),
        source_titles=_source_titles(db, row),
        region=_region(db, cluster, nodes),
        pd_url=pd_url_of(config_json_view(c.config) for c in latest_configs(db, cluster.org_id,
                                                                              [n.row.id for n in nodes]).values()),
    )
    try:
        rendered = artefact(patch, fmt, config_text=config_text,
                            node=chosen.node.status_address if chosen is not None else None, rollback=rollback,
                            config_source=f"tikv.toml of {chosen.node.address}" if chosen else "tikv.toml")
    except TikvConfError as exc:
        raise _invalid(exc, "format") from exc
    return Rendered(rendered, source, config_row.id if config_row is not None else None)


def render_operator_manifest(db: Session, principal: Principal, cluster_id: uuid.UUID, patch_id: uuid.UUID,
                             manifest: str, *, rollback: bool = False) -> OperatorPatch:
    """The patch of the user's own TidbCluster/TiKVGroup manifest that changes only the patch's tikv keys; with
    `rollback`, the JSON patch that takes the patched object back to this manifest's config (the manifest the
    patch was made from: a key it did not have is removed again, not pinned to the node's value)."""
    cluster = clusters_service.get_cluster(db, principal, cluster_id)
    row = get_patch(db, principal, cluster.id, patch_id)
    changes = [c for c in row.changes if c.target == "tikv"]
    try:
        if rollback:
            return rollback_manifest(manifest, changes, "manifest")
        return patch_manifest(manifest, changes, "manifest")
    except ConfigParseError as exc:
        raise InvalidInput(f"manifest: {exc}", details={"field": "manifest", "line": exc.line,
                                                        "column": exc.column}) from exc
    except TikvConfError as exc:
        raise InvalidInput(f"manifest: {exc}", details={"field": "manifest"}) from exc


def tiup_topology_file_name(*, rollback: bool) -> str:
    """The download's file name, which the TiUP command names."""
    return f"topology{'-rollback' if rollback else ''}.yaml"


def render_tiup_topology(db: Session, principal: Principal, cluster_id: uuid.UUID, patch_id: uuid.UUID,
                         topology: str, *, rollback: bool = False) -> TopologyPatch:
    """The user's TiUP topology with the patch's tikv changes made in place (TiUP's precedence, comments kept); with
    `rollback`, the topology the patch was made from as it was (edit-config --topology-file replaces the whole
    topology, so that file is the exact rollback)."""
    cluster = clusters_service.get_cluster(db, principal, cluster_id)
    row = get_patch(db, principal, cluster.id, patch_id)
    changes = [c for c in row.changes if c.target == "tikv"]
    if not changes:
        raise InvalidInput("topology: this patch changes no tikv.toml key", details={"field": "topology"})
    make = rollback_topology if rollback else patch_topology
    try:
        return make(topology, changes, [n.node for n in _nodes(db, cluster)], "topology",
                    cluster=None, display_name=cluster.name,  # TiUP's name is not known: a placeholder
                    topology_file=tiup_topology_file_name(rollback=rollback))
    except ConfigParseError as exc:
        raise InvalidInput(f"topology: {exc}", details={"field": "topology", "line": exc.line,
                                                        "column": exc.column}) from exc
    except TikvConfError as exc:
        raise InvalidInput(f"topology: {exc}", details={"field": "topology"}) from exc


def _render_configs(db: Session, row: PatchRecord, cluster: Cluster, nodes: Sequence[_NodeInfo],
                    changed: Sequence[_NodeInfo], *, rollback: bool) -> Rendered:
    """Every changed node's merged tikv.toml and its diff in one zip (<node>/tikv.toml, <node>/tikv.toml.diff)."""
    if not changed:
        raise InvalidInput("format: this patch changes no tikv.toml key, so it has no config files; download the "
                           "aws or terraform format", details={"field": "format"})
    patch = ConfPatch(cluster=cluster.name, tikv_version=cluster.tikv_version, nodes=tuple(n.node for n in nodes),
                      changes=tuple(row.changes), sources=tuple(row.change_sources),
                      source_titles=_source_titles(db, row))
    buffer = io.BytesIO()
    notes: list[str] = []
    written = 0
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for info in changed:
            config_row = _config_at(db, row, info.row)
            if config_row is None:
                notes.append(f"{info.node.address}: no config collected, no file")
                continue
            uploaded = _toml_text(config_row)
            text = uploaded if uploaded is not None else toml_from_config(config_row.config)
            folder = _node_file_name(info.node)
            try:  # both files from one patching of the node's tikv.toml
                both = artefacts(patch, config_text=text, node=info.node.status_address, formats=("merged", "diff"),
                                 rollbacks=(rollback,), config_source=f"tikv.toml of {info.node.address}")
            except TikvConfError as exc:
                raise _invalid(exc, "format") from exc
            for art, name in zip(both.values(), ("tikv.toml", "tikv.toml.diff"), strict=True):
                archive.writestr(f"{folder}/{name}", art.body)
                notes.extend(f"{info.node.address}: {note}" for note in art.notes
                             if f"{info.node.address}: {note}" not in notes)
            written += 1
        if notes:
            archive.writestr("NOTES.txt", "\n".join(notes) + "\n")
    if not written:
        raise InvalidInput("format: configs needs a stored config of a changed node; none has been collected",
                           details={"field": "format"})
    filename = f"{file_slug(cluster.name)}-{'rollback-' if rollback else ''}tikv-configs.zip"
    listing = Artefact("configs", filename, "application/zip", "", tuple(notes))
    return Rendered(listing, None, None, buffer.getvalue())


# --- the API's view of the row (routers never read ORM rows themselves) ----------------------------------


def patch_read(db: Session, row: PatchRecord) -> PatchRead:
    """The API's view of a patch: its base config, the nodes whose tikv.toml it changes and its formats."""
    return patch_reads(db, [row])[0]


def patch_reads(db: Session, rows: Sequence[PatchRecord]) -> list[PatchRead]:
    """The API's view of several patches of one organisation in a fixed number of queries (a list page read each
    patch's cluster, nodes and configs again: 3 + 2 per changed node queries a patch)."""
    if not rows:
        return []
    org_id = rows[0].org_id
    base_ids = {r.base_config_id for r in rows if r.base_config_id is not None}
    bases = {c.id: c for c in db.scalars(select(TikvConfig).where(TikvConfig.org_id == org_id,
                                                                  TikvConfig.id.in_(base_ids)))} if base_ids else {}
    nodes_of: dict[uuid.UUID, list[_NodeInfo]] = {}
    for cluster_id in {r.cluster_id for r in rows}:
        cluster = db.get(Cluster, cluster_id)
        nodes_of[cluster_id] = _nodes(db, cluster) if cluster is not None and cluster.org_id == org_id else []
    node_ids = [info.row.id for infos in nodes_of.values() for info in infos]
    # A node has a file to patch when any config of it was ever stored (_config_at falls back to the newest).
    with_config = set(db.scalars(select(TikvConfig.node_id).where(TikvConfig.org_id == org_id,
                                                                  TikvConfig.node_id.in_(node_ids))
                                 .distinct())) if node_ids else set()
    reads = []
    for row in rows:
        base = bases.get(row.base_config_id) if row.base_config_id is not None else None
        node_reads = []
        for info in _changed_nodes(row.changes, nodes_of.get(row.cluster_id, [])):
            keys = sorted({c.key for c in row.changes if c.target == "tikv"
                           and target_node(c) in (None, info.node.status_address)})
            has = info.row.id in with_config or (base is not None and base.node_id == info.row.id)
            node_reads.append(PatchNodeRead(status_address=info.node.status_address, address=_where(info.node),
                                            keys=keys, has_config=has))
        has_config = any(n.has_config for n in node_reads)
        reads.append(PatchRead(
            id=row.id, cluster_id=row.cluster_id, created_by_user_id=row.created_by_user_id,
            created_at=row.created_at, finding_ids=list(row.finding_ids), base_config_id=row.base_config_id,
            base_config=BaseConfigRead(id=base.id, node_id=base.node_id, version=base.version, source=base.source,
                                       captured_at=base.captured_at, has_raw_text=base.raw_text is not None)
            if base is not None else None,
            changes=list(row.changes), change_sources=list(row.change_sources), notes=list(row.notes),
            applied_at=row.applied_at, applied_by_user_id=row.applied_by_user_id, nodes=node_reads,
            formats=[f for f in (*FORMATS, "configs") if has_config or f not in ("merged", "diff", "configs")],
        ))
    return reads
