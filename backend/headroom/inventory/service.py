"""TiKV nodes of a cluster: listed, added by hand (store + status address), or found by a Prometheus source."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from headroom.accounts.service import Principal, audit
from headroom.clusters.service import get_cluster
from headroom.domain.catalog.resolve import ResolvedInstanceLimits, resolve_volume_limits
from headroom.inventory.limits import resolve_instance_types
from headroom.inventory.models import Instance, TikvConfig, TikvNode, Volume
from headroom.platform.errors import Conflict, NotFound
from headroom.platform.outbound import require_allowed_url
from headroom.sources.prometheus.tikv_status import config_url


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
    """A volume's performance as the catalog derives it from type, size and provisioned settings (domain.md §1)."""

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
