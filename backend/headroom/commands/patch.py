"""`headroom patch`: turn accepted findings into a fix to apply (tikv.toml, TiUP, SQL, AWS CLI, ...).

Reads a snapshot (cluster name, TiKV version, nodes) and the advisor's findings JSON, selects findings by rule
or dedup key, validates their changes as domain Changes (a change without its own entity is its finding's), and
prints one artefact from headroom.domain.tikvconf.render. Bad input exits non-zero with a one-line reason; a malformed
tikv.toml names its line and column.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from headroom.commands._output import fail
from headroom.domain.advisor.finding import complete_change
from headroom.domain.model import Change, EntityRef
from headroom.domain.tikvconf import (
    FORMATS,
    ROLLBACK_HELP,
    HostFacts,
    Patch,
    PatchTarget,
    TikvConfError,
    artefact,
    config_json_view,
    fill_current,
    pd_url_of,
    resolve_nodes,
)
from headroom.domain.tikvconf.operator import patch_manifest, rollback_manifest
from headroom.domain.tikvconf.tiup import patch_topology, rollback_topology

GIB = 1024**3


@dataclass(frozen=True)
class _Cluster:
    name: str
    version: str | None
    nodes: tuple[PatchTarget, ...]
    configs: dict[str, dict[str, Any]]  # status address -> dotted-key view of the effective config
    hosts: dict[str, HostFacts]
    region: str | None = None


def _read_text(path: Path, what: str) -> str:
    # newline="": the text as written. Path.read_text turns CRLF into LF, so a Windows-edited tikv.toml came back
    # with other line endings: its rollback was not the file and its diff did not apply to it.
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            return handle.read()
    except OSError as exc:
        fail(f"{what} {path}: {exc.strerror or exc}")
    except UnicodeDecodeError:
        fail(f"{what} {path}: not UTF-8 text")


def _cluster_from_snapshot(path: Path) -> _Cluster:
    """Return cluster name, TiKV version and nodes, from a valid snapshot or, failing that, the raw JSON."""
    from headroom.domain.snapshot.errors import SnapshotError
    from headroom.domain.snapshot.files import load_snapshot
    from headroom.domain.snapshot.views import disk_view

    try:
        snapshot = load_snapshot(path)
    except SnapshotError as exc:
        strict_error = str(exc)
    else:
        disks = {node.id: disk_view(snapshot, node.id) for node in snapshot.nodes}
        nodes = tuple(
            PatchTarget(
                status_address=node.status_address,
                address=node.address,
                instance_id=node.instance_id,
                name=node.id,
                store_id=node.store_id,
                data_mount=disks[node.id].mountpoint,
                data_fstype=disks[node.id].fstype,
            )
            for node in snapshot.nodes
        )
        configs = {node.status_address: config_json_view(node.config) for node in snapshot.nodes}
        hosts = {
            node.status_address: HostFacts(cpus=node.vcpus, memory_bytes=int(node.memory_gib * GIB))
            for node in snapshot.nodes
        }
        return _Cluster(snapshot.cluster.name, snapshot.cluster.tikv_version, nodes, configs, hosts,
                        snapshot.cluster.region)
    # A snapshot that does not validate may still name the cluster and its nodes: enough to render a patch.
    try:
        document = json.loads(_read_text(path, "snapshot"))
        cluster = document["cluster"]
        nodes = tuple(
            PatchTarget(
                status_address=raw["status_address"],
                address=raw.get("address"),
                instance_id=raw.get("instance_id"),
                name=raw.get("id"),
                store_id=raw.get("store_id"),
            )
            for raw in document.get("nodes", [])
        )
        return _Cluster(str(cluster["name"]), cluster.get("tikv_version"), nodes, {}, {})
    except (ValueError, KeyError, TypeError, AttributeError):
        fail(strict_error)


class _FindingChanges(BaseModel):
    """What a patch needs of one finding of the advisor's output: which finding it is and its changes."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    rule: str
    dedup_key: str = ""
    title: str = ""
    entity: EntityRef | None = None
    changes: list[Change] = Field(default_factory=list)

    def label(self) -> str:
        """The label the artefacts print next to each change: the dedup key (it names the rule)."""
        if self.dedup_key and self.dedup_key.startswith(self.rule):
            return self.dedup_key
        return f"{self.rule} ({self.dedup_key})" if self.dedup_key else self.rule

    def complete_changes(self) -> list[Change]:
        """The changes, each with the finding's entity when it names none (as the advisor's Finding does)."""
        return [complete_change(c, self.entity) for c in self.changes] if self.entity else list(self.changes)


def _findings(path: Path) -> list[_FindingChanges]:
    text = _read_text(path, "findings")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        fail(f"findings {path} line {exc.lineno}, column {exc.colno}: {exc.msg}")
    findings = document.get("findings") if isinstance(document, dict) else document
    if not isinstance(findings, list) or not all(isinstance(f, dict) for f in findings):
        fail(f'findings {path}: expected {{"findings": [{{"rule": ..., "changes": [...]}}, ...]}}')
    parsed: list[_FindingChanges] = []
    for index, raw in enumerate(findings):
        try:
            parsed.append(_FindingChanges.model_validate(raw))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            fail(f"findings {path}: finding {index + 1}: a change is malformed ({where}: {first['msg']})")
    return parsed


def _selected_changes(findings: list[_FindingChanges], select: list[str]
                      ) -> tuple[list[Change], list[str], list[str]]:
    """Return the changes of the findings whose rule or dedup key is selected (all without a selection), each
    change's finding key and its finding in words (the title)."""
    wanted = set(select)
    changes: list[Change] = []
    sources: list[str] = []
    titles: list[str] = []
    for finding in findings:
        if wanted and finding.rule not in wanted and finding.dedup_key not in wanted:
            continue
        for change in finding.complete_changes():
            changes.append(change)
            sources.append(finding.label())
            titles.append(finding.title)
    return changes, sources, titles


def patch_command(
    snapshot: Annotated[Path, typer.Argument(help="Snapshot JSON: cluster name, TiKV version, nodes.")],
    findings: Annotated[Path, typer.Option("--findings", help="Findings JSON from the advisor.")],
    format: Annotated[str, typer.Option("--format", help=f"One of: {', '.join(FORMATS)}.")] = "toml",
    config: Annotated[
        Path | None,
        typer.Option(
            "--config", help="Current tikv.toml (merged, diff) or spec.tikv.config TOML (operator)."
        ),
    ] = None,
    finding: Annotated[
        list[str] | None, typer.Option("--finding", help="Only this rule or dedup key (repeatable).")
    ] = None,
    node: Annotated[
        str | None, typer.Option("--node", help="Only this node's tikv changes (id or status address).")
    ] = None,
    rollback: Annotated[bool, typer.Option(
        "--rollback", help="Print the artefact's undo, in the same format (a diff, SQL, a script, ...).")] = False,
    manifest: Annotated[
        Path | None,
        typer.Option(
            "--manifest",
            help="With --format operator: your TidbCluster or TiKVGroup YAML; prints a patch that changes only "
            "the proposed keys (a JSON patch for a config map, the whole updated string for a TOML string).",
        ),
    ] = None,
    tiup_cluster: Annotated[
        str | None,
        typer.Option(
            "--tiup-cluster",
            help="The cluster's name in TiUP (tiup cluster list): the tiup command lines use it. Without it they "
            "hold <tiup-cluster-name>, as the API's do (the snapshot's cluster name is Headroom's, not TiUP's).",
        ),
    ] = None,
    topology: Annotated[
        Path | None,
        typer.Option(
            "--topology",
            help="With --format tiup: your TiUP topology (tiup cluster edit-config / show-config); prints it with "
            "the changes made in place, after TiUP's precedence, comments kept.",
        ),
    ] = None,
) -> None:
    """Print an artefact that applies (or, with --rollback, undoes) the selected findings' changes."""
    if format == "rollback":
        fail(ROLLBACK_HELP)
    if format not in FORMATS:
        fail(f"unknown format {format!r}: expected one of {', '.join(FORMATS)}")
    cluster = _cluster_from_snapshot(snapshot)
    nodes = cluster.nodes
    selected = finding or []
    changes, sources, titles = _selected_changes(_findings(findings), selected)
    if not changes:
        wanted = f" matching {', '.join(selected)}" if selected else ""
        fail(f"no finding{wanted} proposes a change")
    try:
        resolved = fill_current(resolve_nodes(changes, nodes), cluster.configs, cluster.version, cluster.hosts)
    except TikvConfError as exc:
        fail(str(exc))
    status_address = node
    if node is not None:
        matches = [n.status_address for n in nodes if node in (n.name, n.address, n.status_address)]
        status_address = matches[0] if matches else node
    config_text = _read_text(config, "config") if config is not None else None
    if topology is not None:
        if format != "tiup":
            fail("--topology goes with --format tiup")
        try:
            # the rollback is the topology the patch was made from, as it was (tiup.rollback_topology)
            edited = (rollback_topology if rollback else patch_topology)(
                _read_text(topology, "topology"), resolved, nodes, str(topology), cluster=tiup_cluster,
                topology_file="topology.yaml", display_name=cluster.name)
        except TikvConfError as exc:
            fail(str(exc))
        for note in edited.notes:
            sys.stderr.write(f"headroom: note: {note}\n")
        sys.stderr.write(f"headroom: note: save it as topology.yaml, then apply with: {edited.command}\n")
        sys.stdout.flush()
        sys.stdout.buffer.write(edited.text.encode("utf-8"))
        sys.stdout.buffer.flush()
        return
    if manifest is not None:
        if format != "operator":
            fail("--manifest goes with --format operator")
        try:
            # the rollback takes the patched object back to this manifest's config (operator.rollback_manifest)
            patched = (rollback_manifest if rollback else patch_manifest)(
                _read_text(manifest, "manifest"), resolved, str(manifest))
        except TikvConfError as exc:
            fail(str(exc))
        sys.stderr.write(f"headroom: note: apply with: {patched.command}\n")
        sys.stdout.flush()
        sys.stdout.buffer.write(patched.body.encode("utf-8"))
        sys.stdout.buffer.flush()
        return
    patch = Patch(cluster=cluster.name, tikv_version=cluster.version, nodes=nodes, changes=resolved,
                  sources=tuple(sources), source_titles=tuple(titles), region=cluster.region, pd_url=pd_url_of(cluster.configs.values()),
                  tiup_name=tiup_cluster)
    try:
        rendered = artefact(
            patch,
            format,
            config_text=config_text,
            node=status_address,
            rollback=rollback,
            config_source=str(config) if config is not None else "tikv.toml",
        )
    except TikvConfError as exc:
        fail(str(exc))
    for note in rendered.notes:
        sys.stderr.write(f"headroom: note: {note}\n")
    sys.stdout.flush()
    sys.stdout.buffer.write(rendered.body.encode("utf-8"))  # bytes as rendered: no newline translation
    sys.stdout.buffer.flush()


def register(app: typer.Typer) -> None:
    """Add the `patch` command to the headroom CLI."""
    app.command("patch")(patch_command)
