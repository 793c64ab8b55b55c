"""TiKV nodes of a cluster: listed, added by hand (store + status address), or found by a Prometheus source; and
their versioned configs.

Versioned TiKV configs per node: from the status port (`GET /config`), an uploaded tikv.toml, or a TiUP
topology's `server_configs.tikv`. A new version is stored only when the content changed.

`tikv_configs.config` holds the nested kebab-case document as `GET /config` returns it (what the snapshot's
`Node.config` and `config_get` expect); uploads are parsed with tikvconf (errors carry line and column) and
nested the same way, and the uploaded file is kept as written in `raw_text`. The content hash is SHA-256 of the
key-sorted JSON, the same as the demo source's, so an unchanged config never makes a new version.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from headroom.accounts.service import Principal, audit
from headroom.clusters.models import Cluster
from headroom.clusters.service import get_cluster
from headroom.domain.catalog.resolve import ResolvedInstanceLimits, resolve_volume_limits
from headroom.domain.tikvconf.change import host_of
from headroom.platform.isolated import run_isolated
from headroom.domain.tikvconf.errors import ConfigParseError, ConfigTooLarge
from headroom.domain.tikvconf.limits import drop_unstorable
from headroom.domain.tikvconf.parse import ConfigView, config_json_view, parse_toml, tiup_topology_view
from headroom.domain.tikvconf.validate import check_config
from headroom.inventory.links import aws_console_url, grafana_node_url
from headroom.inventory.limits import resolve_instance_types
from headroom.inventory.models import Instance, TikvConfig, TikvNode, Volume
from headroom.inventory.schemas import ConfigRead, InstanceEbsLimits, NodeInstance, NodeRead, NodeVolume

# Re-exported (`as`) for the Prometheus source's node discovery: features meet through services.
from headroom.inventory.tikv_status import StatusPortError as StatusPortError
from headroom.inventory.tikv_status import advertised_store_address as advertised_store_address
from headroom.inventory.tikv_status import config_url, fetch_config
from headroom.platform.errors import Conflict, InvalidInput, NotFound, PayloadTooLarge
from headroom.platform.logging import get_logger
from headroom.platform.outbound import require_allowed_url
from headroom.platform.retry import RetryPolicy

log = get_logger("headroom.inventory.service")


def list_nodes(db: Session, principal: Principal, cluster_id: uuid.UUID) -> list[TikvNode]:
    """Return the org's cluster's TiKV nodes ordered by store address."""
    get_cluster(db, principal, cluster_id)
    return list(
        db.scalars(
            select(TikvNode)
            .where(TikvNode.org_id == principal.org_id, TikvNode.cluster_id == cluster_id)
            .order_by(TikvNode.store_address)
        )
    )


def get_node(db: Session, principal: Principal, cluster_id: uuid.UUID, node_id: uuid.UUID) -> TikvNode:
    """Return one node of the org's cluster; another org's node is a 404."""
    node = db.scalar(
        select(TikvNode).where(
            TikvNode.id == node_id, TikvNode.cluster_id == cluster_id, TikvNode.org_id == principal.org_id
        )
    )
    if node is None:
        raise NotFound("TiKV node not found.")
    return node


def create_node(
    db: Session,
    principal: Principal,
    cluster_id: uuid.UUID,
    *,
    store_address: str,
    status_address: str | None = None,
    store_id: int | None = None,
    version: str | None = None,
) -> TikvNode:
    """Add a node by hand (when Prometheus can't tell its status address, or there is no Prometheus)."""
    principal.require("admin")
    get_cluster(db, principal, cluster_id)
    if status_address:
        require_allowed_url(config_url(status_address), field="status_address")
    taken = db.scalar(
        select(TikvNode.id).where(TikvNode.cluster_id == cluster_id, TikvNode.store_address == store_address)
    )
    if taken is not None:
        raise Conflict(f"The cluster already has a node at {store_address}.", code="node_exists")
    node = TikvNode(
        org_id=principal.org_id,
        cluster_id=cluster_id,
        store_address=store_address,
        status_address=status_address,
        store_id=store_id,
        version=version,
    )
    db.add(node)
    db.flush()
    audit(
        db,
        principal,
        "tikv_node.created",
        target_kind="tikv_node",
        target_id=node.id,
        details={"store_address": store_address, "status_address": status_address},
    )
    return node


def update_node(
    db: Session,
    principal: Principal,
    cluster_id: uuid.UUID,
    node_id: uuid.UUID,
    *,
    status_address: str | None,
) -> TikvNode:
    """Set (or clear) a node's status address by hand."""
    principal.require("admin")
    node = get_node(db, principal, cluster_id, node_id)
    if status_address:
        require_allowed_url(config_url(status_address), field="status_address")
    node.status_address = status_address
    db.flush()
    audit(
        db,
        principal,
        "tikv_node.updated",
        target_kind="tikv_node",
        target_id=node.id,
        details={"status_address": status_address},
    )
    return node


# --- inventory of nodes: instance, its EBS limits, volumes (a fixed number of queries for any number of nodes) ---


@dataclass(frozen=True)
class VolumeFigures:
    """A volume's performance as the catalog derives it from type, size and provisioned settings (docs/reference/ebs-volume-types.md)."""

    iops: float | None
    iops_provisioned: bool
    throughput_mibps: float | None
    burstable: bool


@dataclass(frozen=True)
class NodeVolumeInfo:
    volume: Volume
    role: str  # data | raft: the part the node uses it for
    figures: VolumeFigures


@dataclass(frozen=True)
class NodeInventory:
    """What a node runs on: its EC2 instance with the type's EBS limits, and its data and raft volumes."""

    instance: Instance | None = None
    limits: ResolvedInstanceLimits | None = None  # None without an instance; `.limits` None for an unknown type
    volumes: list[NodeVolumeInfo] = field(default_factory=list)
    config_versions: list[int] = field(default_factory=list)


def volume_figures(volume_type: str, size_gib: float, iops: int | None, throughput_mibps: int | None) -> VolumeFigures:
    """Return IOPS (provisioned, else the type's baseline), throughput and the burst flag of a volume."""
    limits = resolve_volume_limits(volume_type, size_gib, iops, throughput_mibps).limits
    if limits is None:  # a type the catalog does not know (e.g. standard magnetic): report what EC2 said
        return VolumeFigures(
            iops=float(iops) if iops is not None else None,
            iops_provisioned=iops is not None,
            throughput_mibps=float(throughput_mibps) if throughput_mibps is not None else None,
            burstable=False,
        )
    provisioned = limits.provisioned_iops
    return VolumeFigures(
        iops=float(provisioned) if provisioned is not None else limits.baseline_iops,
        iops_provisioned=provisioned is not None,
        throughput_mibps=limits.baseline_throughput_mibps,
        burstable=limits.bursts,
    )


def _natural_device(volume: Volume) -> tuple[int, str]:
    return (0 if volume.device else 1, volume.device or volume.volume_id)


def nodes_inventory(db: Session, org_id: uuid.UUID, nodes: Sequence[TikvNode]) -> dict[uuid.UUID, NodeInventory]:
    """Return each node's instance, EBS limits, volumes and config versions, with one query per table."""
    if not nodes:
        return {}
    node_ids = [n.id for n in nodes]
    instance_ids = {n.instance_ref_id for n in nodes if n.instance_ref_id is not None}
    instances = (
        {i.id: i for i in db.scalars(select(Instance).where(Instance.org_id == org_id, Instance.id.in_(instance_ids)))}
        if instance_ids
        else {}
    )
    # A node alone on its instance owns the instance's data/raft volumes (RAID members too), as the snapshot
    # builder reads them; nodes sharing a host only their own referenced volumes.
    per_instance: dict[uuid.UUID, int] = defaultdict(int)
    for n in nodes:
        if n.instance_ref_id is not None:
            per_instance[n.instance_ref_id] += 1
    sole_hosts = [ref for ref, count in per_instance.items() if count == 1 and ref in instances]
    volume_refs = {r for n in nodes for r in (n.data_volume_ref_id, n.raft_volume_ref_id) if r is not None}
    volume_rows: list[Volume] = []
    if volume_refs or sole_hosts:
        volume_rows = list(
            db.scalars(
                select(Volume).where(
                    Volume.org_id == org_id,
                    or_(
                        Volume.id.in_(volume_refs),
                        Volume.instance_ref_id.in_(sole_hosts) & Volume.role.in_(("data", "raft")),
                    ),
                )
            )
        )
    versions: dict[uuid.UUID, list[int]] = defaultdict(list)
    for node_id, version in db.execute(
        select(TikvConfig.node_id, TikvConfig.version)
        .where(TikvConfig.org_id == org_id, TikvConfig.node_id.in_(node_ids))
        .order_by(TikvConfig.node_id, TikvConfig.version)
    ):
        versions[node_id].append(version)
    limits = resolve_instance_types(db, {i.instance_type for i in instances.values()})

    volumes_by_id = {v.id: v for v in volume_rows}
    by_host: dict[uuid.UUID, list[Volume]] = defaultdict(list)
    for v in volume_rows:
        if v.instance_ref_id is not None and v.role in ("data", "raft"):
            by_host[v.instance_ref_id].append(v)

    result: dict[uuid.UUID, NodeInventory] = {}
    for n in nodes:
        instance = instances.get(n.instance_ref_id) if n.instance_ref_id is not None else None
        chosen: dict[uuid.UUID, tuple[Volume, str]] = {}
        if instance is not None and n.instance_ref_id in sole_hosts:
            for v in by_host.get(instance.id, []):
                chosen[v.id] = (v, v.role)
        for ref, role in ((n.data_volume_ref_id, "data"), (n.raft_volume_ref_id, "raft")):
            if ref is not None and ref in volumes_by_id and ref not in chosen:
                chosen[ref] = (volumes_by_id[ref], role)
        ordered = sorted(chosen.values(), key=lambda vr: (0 if vr[1] == "data" else 1, _natural_device(vr[0])))
        result[n.id] = NodeInventory(
            instance=instance,
            limits=limits[instance.instance_type] if instance is not None else None,
            volumes=[
                NodeVolumeInfo(v, role, volume_figures(v.volume_type, v.size_gib, v.iops, v.throughput_mibps))
                for v, role in ordered
            ],
            config_versions=versions.get(n.id, []),
        )
    return result


# --- TiKV configs ------------------------------------------------------------------------------------------

UploadFormat = Literal["toml", "tiup_topology"]
ConfigFetcher = Callable[[str], tuple[dict[str, Any], str]]


def content_sha256(config: dict[str, Any]) -> str:
    """Hash a nested config; equal configs hash equal whatever their key order."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()


def nest(view: ConfigView) -> dict[str, Any]:
    """Turn a dotted-key view ("storage.block-cache.capacity") back into nested sections."""
    out: dict[str, Any] = {}
    for key, value in view.items():
        cursor = out
        *sections, leaf = key.split(".")
        for section in sections:
            nxt = cursor.setdefault(section, {})
            if not isinstance(nxt, dict):  # "a = 1" and "a.b = 2" both given: keep the table
                nxt = cursor[section] = {}
            cursor = nxt
        cursor[leaf] = value
    return out


def _plain(value: Any) -> Any:
    # tomlkit items unwrap to plain Python; JSON can't hold dates, so they become strings.
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return value


def latest_config(db: Session, node: TikvNode) -> TikvConfig | None:
    return db.scalar(
        select(TikvConfig).where(TikvConfig.node_id == node.id).order_by(TikvConfig.version.desc()).limit(1)
    )


@dataclass(frozen=True)
class StoredConfig:
    config: TikvConfig
    created: bool  # False when the content equals the latest version (nothing stored)
    warnings: tuple[str, ...] = ()


def _unknown_key_warnings(keys: tuple[str, ...]) -> tuple[str, ...]:
    shown = ", ".join(keys[:20]) + (f" and {len(keys) - 20} more" if len(keys) > 20 else "")
    return (
        f"TiKV's config template has no key {shown}: stored as written (a newer TiKV may have "
        f"{'it' if len(keys) == 1 else 'them'}); check the spelling",
    )


def store_version(
    db: Session,
    node: TikvNode,
    config: dict[str, Any],
    *,
    source: str,
    raw_text: str | None,
    now: dt.datetime,
) -> StoredConfig:
    """Store a nested config as the node's next version unless it equals the latest one.

    Keys whose values PostgreSQL's JSONB refuses (nan, inf, a NUL in a string or key) are left out and logged:
    uploads refuse them before this (422), so only a status port's answer can bring them."""
    config, skipped = drop_unstorable(_plain(config))
    for key, reason in skipped:
        log.warning("tikv_config.key_skipped", node=str(node.id), source=source, key=key, reason=reason)
    digest = content_sha256(config)
    latest = latest_config(db, node)
    if latest is not None and latest.content_sha256 == digest:
        return StoredConfig(latest, False)
    # Serialise concurrent writers of one node (status poll vs upload) so versions stay 1, 2, 3, ...
    db.execute(select(func.pg_advisory_xact_lock(func.hashtext(f"tikv_config:{node.id}"))))
    latest = latest_config(db, node)
    if latest is not None and latest.content_sha256 == digest:
        return StoredConfig(latest, False)
    row = TikvConfig(
        org_id=node.org_id,
        node_id=node.id,
        version=(latest.version + 1) if latest else 1,
        source=source,
        config=config,
        raw_text=raw_text,
        content_sha256=digest,
        captured_at=now,
    )
    db.add(row)
    db.flush()
    return StoredConfig(row, True)


def read_upload(content: str, format: UploadFormat, store_address: str) -> dict[str, Any]:
    """The node's TiKV config from an uploaded tikv.toml, or from a TiUP topology (the instance at the node's
    address, server_configs under its own config); raises ConfigParseError / ConfigTooLarge. Pure: it runs in
    the parser's worker process (platform/isolated.py)."""
    if format == "toml":
        return dict(_plain(parse_toml(content, "tikv.toml").unwrap()))
    topology = tiup_topology_view(content, "topology.yaml")
    host = host_of(store_address)
    port = store_address.rsplit(":", 1)[1] if ":" in store_address else None
    return nest(topology.for_instance(host, int(port) if port and port.isdigit() else None))


def upload_config(
    db: Session,
    principal: Principal,
    cluster_id: uuid.UUID,
    node_id: uuid.UUID,
    *,
    content: str,
    format: UploadFormat,
    now: dt.datetime,
) -> StoredConfig:
    """Store an uploaded tikv.toml (or a TiUP topology's TiKV config for this node), keeping the raw text."""
    principal.require("admin")
    node = get_node(db, principal, cluster_id, node_id)
    source = "upload" if format == "toml" else "tiup"
    try:
        # in a worker process: a large document's parse holds the GIL, and no other request may wait for it
        config = run_isolated(read_upload, content, format, node.store_address)
    except ConfigTooLarge as error:
        raise PayloadTooLarge(
            str(error),
            code="config_too_large",
            details=[{"field": "content", "size": error.size, "limit": error.limit, "message": error.message}],
        ) from None
    except ConfigParseError as error:
        raise InvalidInput(
            str(error),
            code="config_parse_error",
            details=[
                {"field": "content", "line": error.line, "column": error.column, "message": error.message}
            ],
        ) from None
    checked = check_config(config, content if format == "toml" else None)
    if checked.problems:
        first = checked.problems[0]
        where = f" (line {first.line})" if first.line else ""
        more = f"; and {len(checked.problems) - 1} more" if len(checked.problems) > 1 else ""
        raise InvalidInput(
            f"content: {first.key}{where}: {first.message}{more}. Nothing was stored.",
            code="config_value_error",
            details=[
                {"field": "content", "key": p.key, "line": p.line, "message": p.message} for p in checked.problems
            ],
        )
    stored = store_version(db, node, config, source=source, raw_text=content, now=now)
    if checked.unknown_keys:
        stored = StoredConfig(stored.config, stored.created, _unknown_key_warnings(checked.unknown_keys))
    audit(
        db,
        principal,
        "tikv_config.uploaded",
        target_kind="tikv_node",
        target_id=node.id,
        details={"format": format, "version": stored.config.version, "created": stored.created},
    )
    return stored


def get_config(
    db: Session, principal: Principal, cluster_id: uuid.UUID, node_id: uuid.UUID, version: int | None = None
) -> TikvConfig:
    """Return the node's latest config version, or the given one."""
    node = get_node(db, principal, cluster_id, node_id)
    query = select(TikvConfig).where(TikvConfig.node_id == node.id, TikvConfig.org_id == principal.org_id)
    if version is None:
        row = db.scalar(query.order_by(TikvConfig.version.desc()).limit(1))
    else:
        row = db.scalar(query.where(TikvConfig.version == version))
    if row is None:
        raise NotFound(
            "No config stored for this node." if version is None else f"No config version {version}."
        )
    return row


def config_versions(db: Session, node: TikvNode) -> list[int]:
    return list(
        db.scalars(
            select(TikvConfig.version).where(TikvConfig.node_id == node.id).order_by(TikvConfig.version)
        )
    )


@dataclass(frozen=True)
class StatusPollResult:
    node_id: uuid.UUID
    status_address: str
    version: int | None
    created: bool
    error: str | None


def default_fetcher(status_address: str) -> tuple[dict[str, Any], str]:
    return fetch_config(status_address, retry=RetryPolicy(attempts=3, base_seconds=0.5, cap_seconds=4.0))


def read_status_port(
    status_address: str, *, fetcher: ConfigFetcher = default_fetcher
) -> tuple[dict[str, Any] | None, str | None]:
    """Fetch and check a live config: (config, None), or (None, why not). Touches no database; never raises on I/O."""
    try:
        decoded, _raw = fetcher(status_address)
        config_json_view(decoded, f"{status_address}/config")  # checks the shape
    except (StatusPortError, ConfigParseError) as error:
        return None, str(error)
    return decoded, None


def store_polled(db: Session, node: TikvNode, decoded: dict[str, Any], *, now: dt.datetime) -> StatusPollResult:
    """Store a config read from the node's status port when it changed."""
    # The live JSON is canonical and large; raw_text is kept only for uploads, whose layout patches preserve.
    stored = store_version(db, node, decoded, source="status_port", raw_text=None, now=now)
    return StatusPollResult(node.id, node.status_address or "", stored.config.version, stored.created, None)


def poll_status_port(
    db: Session, node: TikvNode, *, now: dt.datetime, fetcher: ConfigFetcher = default_fetcher
) -> StatusPollResult:
    """Read a node's live config from its status port and store it when it changed. Never raises on I/O."""
    if not node.status_address:
        return StatusPollResult(node.id, "", None, False, "no status address")
    decoded, error = read_status_port(node.status_address, fetcher=fetcher)
    if decoded is None:
        return StatusPollResult(node.id, node.status_address, None, False, error)
    return store_polled(db, node, decoded, now=now)


def poll_cluster(
    db: Session,
    org_id: uuid.UUID,
    cluster_id: uuid.UUID,
    *,
    now: dt.datetime,
    fetcher: ConfigFetcher = default_fetcher,
) -> list[StatusPollResult]:
    """Poll every node of a cluster that has a status address."""
    nodes = db.scalars(
        select(TikvNode)
        .where(TikvNode.org_id == org_id, TikvNode.cluster_id == cluster_id)
        .order_by(TikvNode.store_address)
    )
    return [poll_status_port(db, node, now=now, fetcher=fetcher) for node in nodes]


# --- the API's views of the rows (routers never read ORM rows themselves) ---------------------------------


@dataclass(frozen=True)
class _Links:
    """Where a cluster's nodes link to: the AWS console (not for the simulated demo fleet) and its Grafana."""

    console: bool
    grafana_url: str | None


# The Grafana URL given on a cluster's Prometheus source (org, cluster) -> URL or None; the sources feature provides
# it (api.app hands it over), so inventory does not import sources.
GrafanaOf = Callable[[Session, uuid.UUID, uuid.UUID], str | None]


def _links(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID, grafana_of: GrafanaOf | None) -> _Links:
    cluster = db.scalar(select(Cluster).where(Cluster.org_id == org_id, Cluster.id == cluster_id))
    return _Links(console=cluster is not None and not cluster.is_demo,
                  grafana_url=grafana_of(db, org_id, cluster_id) if grafana_of is not None else None)


def node_reads(db: Session, nodes: list[TikvNode], grafana_of: GrafanaOf | None = None) -> list[NodeRead]:
    """The API's view of nodes: each with its config versions, instance (EBS limits), volumes and links out."""
    if not nodes:
        return []
    inventory = nodes_inventory(db, nodes[0].org_id, nodes)
    links = {cid: _links(db, nodes[0].org_id, cid, grafana_of) for cid in {n.cluster_id for n in nodes}}
    return [_node_read(node, inventory[node.id], links[node.cluster_id]) for node in nodes]


def _node_read(node: TikvNode, inv: NodeInventory, links: _Links) -> NodeRead:
    read = NodeRead.model_validate(node)
    region = inv.instance.region if inv.instance is not None and links.console else None
    if links.grafana_url and node.status_address:
        read.grafana_url = grafana_node_url(links.grafana_url, node.status_address)
    read.config_versions = inv.config_versions
    if inv.instance is not None:
        lim = inv.limits.limits if inv.limits is not None else None
        read.instance = NodeInstance(
            instance_id=inv.instance.instance_id,
            instance_type=inv.instance.instance_type,
            vcpus=inv.instance.vcpus,
            memory_gib=inv.instance.memory_gib,
            availability_zone=inv.instance.availability_zone,
            ebs=InstanceEbsLimits(
                baseline_throughput_mbps=lim.baseline_throughput_mbps,
                max_throughput_mbps=lim.max_throughput_mbps,
                baseline_iops=lim.baseline_iops,
                max_iops=lim.max_iops,
                bursts=lim.bursts,
                source=lim.source,
            )
            if lim is not None
            else None,
            ebs_note=inv.limits.note if inv.limits is not None and lim is None else None,
            console_url=aws_console_url("instance", inv.instance.instance_id, region),
        )
    read.volumes = [
        NodeVolume(
            volume_id=v.volume.volume_id,
            role=v.role,
            volume_type=v.volume.volume_type,
            size_gib=v.volume.size_gib,
            iops=v.figures.iops,
            iops_provisioned=v.figures.iops_provisioned,
            throughput_mibps=v.figures.throughput_mibps,
            burstable=v.figures.burstable,
            device=v.volume.device,
            console_url=aws_console_url("volume", v.volume.volume_id, region),
        )
        for v in inv.volumes
    ]
    return read


def config_read(row: TikvConfig, created: bool = True, warnings: tuple[str, ...] = ()) -> ConfigRead:
    """The API's view of a config version (`created`: whether this request stored it; `warnings` on it)."""
    read = ConfigRead.model_validate(row)
    read.created = created
    read.warnings = list(warnings)
    return read
