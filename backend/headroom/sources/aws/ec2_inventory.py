"""EC2 inventory: fetch instances, volumes and instance types (shell), and map them (pure).

Pure half: `parse_instances`, `parse_volumes`, `volume_role`, `match_node`, `diff_fields`. Shell half:
`fetch_inventory` (DescribeInstances, DescribeVolumes, DescribeInstanceTypes through their paginators).

Volume role heuristic (first rule that applies wins):
1. a tag says it: `headroom:role`, `tikv:role`, `role` or `Role` = data | raft (anything else -> other);
2. the instance's root device (RootDeviceName) -> other (the OS disk);
3. a tag or device/mount hint containing "raft" (e.g. Name=tikv-1-raft, a mount /raft-log) -> raft;
4. among the instance's remaining (non-root) volumes, the largest -> data; any smaller one that is at most a
   quarter of the data volume's size -> raft (Raft Engine's log is small: PingCAP suggests a separate small
   disk for it, docs/reference/pingcap-guidance.md#raft-engine-disk), else other.
Tags are the reliable way; the size rule matches TiUP/Operator deployments with one data and one raft disk.

TiKV node -> instance: the host of the store address (host:port) equals the instance's private IP, its private
DNS name, or the DNS name's first label (ip-10-0-1-5); failing that, a unique instance tagged with the node's
cluster (`tidb_cluster`, `tidb-cluster` or `cluster`) and `component=tikv` whose `Name` appears in the address.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

ROLE_TAGS = ("headroom:role", "tikv:role", "role", "Role")
CLUSTER_TAGS = ("tidb_cluster", "tidb-cluster", "cluster")
RAFT_SIZE_RATIO = 0.25
INSTANCE_FIELDS = ("instance_type",)
VOLUME_FIELDS = ("volume_type", "size_gib", "iops", "throughput_mibps", "attached_instance_id", "device")


@dataclass(frozen=True)
class InstanceInfo:
    instance_id: str
    instance_type: str
    availability_zone: str | None
    private_ip: str | None
    private_dns: str | None
    root_device: str | None
    detailed_monitoring: bool
    state: str
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class VolumeInfo:
    volume_id: str
    volume_type: str
    size_gib: int
    iops: int | None
    throughput_mibps: int | None
    availability_zone: str | None
    attached_instance_id: str | None
    device: str | None
    tags: dict[str, str] = field(default_factory=dict)


def _tags(raw: Iterable[Mapping[str, str]] | None) -> dict[str, str]:
    return {t["Key"]: t.get("Value", "") for t in raw or () if "Key" in t}


def parse_instances(pages: Iterable[Mapping[str, Any]]) -> list[InstanceInfo]:
    """DescribeInstances pages -> instances (terminated ones skipped)."""
    out = []
    for page in pages:
        for reservation in page.get("Reservations", []):
            for raw in reservation.get("Instances", []):
                state = (raw.get("State") or {}).get("Name", "unknown")
                if state in ("terminated", "shutting-down"):
                    continue
                out.append(InstanceInfo(
                    instance_id=raw["InstanceId"], instance_type=raw["InstanceType"],
                    availability_zone=(raw.get("Placement") or {}).get("AvailabilityZone"),
                    private_ip=raw.get("PrivateIpAddress"), private_dns=raw.get("PrivateDnsName") or None,
                    root_device=raw.get("RootDeviceName"),
                    detailed_monitoring=(raw.get("Monitoring") or {}).get("State") == "enabled",
                    state=state, tags=_tags(raw.get("Tags")),
                ))
    return out


def parse_volumes(pages: Iterable[Mapping[str, Any]]) -> list[VolumeInfo]:
    """DescribeVolumes pages -> volumes with their (first) attachment."""
    out = []
    for page in pages:
        for raw in page.get("Volumes", []):
            attachment = next((a for a in raw.get("Attachments", []) if a.get("State") in ("attached", "attaching")),
                              None)
            out.append(VolumeInfo(
                volume_id=raw["VolumeId"], volume_type=raw["VolumeType"], size_gib=int(raw["Size"]),
                iops=raw.get("Iops"), throughput_mibps=raw.get("Throughput"),
                availability_zone=raw.get("AvailabilityZone"),
                attached_instance_id=attachment.get("InstanceId") if attachment else None,
                device=attachment.get("Device") if attachment else None, tags=_tags(raw.get("Tags")),
            ))
    return out


def _tag_role(tags: Mapping[str, str]) -> str | None:
    for key in ROLE_TAGS:
        if key in tags:
            value = tags[key].strip().lower()
            return value if value in ("data", "raft") else "other"
    return None


def volume_roles(instances: Sequence[InstanceInfo], volumes: Sequence[VolumeInfo]) -> dict[str, str]:
    """Role (data | raft | other) of every volume, by the heuristic in the module docstring."""
    roots = {i.instance_id: i.root_device for i in instances}
    roles: dict[str, str] = {}
    undecided: dict[str, list[VolumeInfo]] = {}
    for v in volumes:
        role = _tag_role(v.tags)
        if role is None and v.attached_instance_id and v.device and roots.get(v.attached_instance_id) == v.device:
            role = "other"
        hint = " ".join([v.tags.get("Name", ""), v.tags.get("mount", ""), v.tags.get("Mount", "")]).lower()
        if role is None and "raft" in hint:
            role = "raft"
        if role is None and v.attached_instance_id is None:
            role = "other"
        if role is not None:
            roles[v.volume_id] = role
        else:
            undecided.setdefault(v.attached_instance_id or "", []).append(v)
    for instance_id, group in undecided.items():
        has_data = any(roles.get(v.volume_id) == "data" for v in volumes if v.attached_instance_id == instance_id)
        group = sorted(group, key=lambda v: (-v.size_gib, v.volume_id))
        largest = group[0].size_gib
        for i, v in enumerate(group):
            if i == 0 and not has_data:
                roles[v.volume_id] = "data"
            elif v.size_gib <= largest * RAFT_SIZE_RATIO:
                roles[v.volume_id] = "raft"
            else:
                roles[v.volume_id] = "other"
    return roles


def address_host(address: str) -> str:
    """Host part of a TiKV store address (host:port, [v6]:port or a bare host)."""
    address = address.strip()
    if address.startswith("["):
        return address[1:].split("]", 1)[0]
    return address.rsplit(":", 1)[0] if address.count(":") == 1 else address


def match_node(store_address: str, instances: Sequence[InstanceInfo], cluster_name: str | None = None) -> str | None:
    """The instance id a TiKV store address runs on, or None (see the module docstring for the rules)."""
    host = address_host(store_address).lower()
    for i in instances:
        names = {i.private_ip, i.private_dns, (i.private_dns or "").split(".", 1)[0] or None}
        if host in {n.lower() for n in names if n}:
            return i.instance_id
    if cluster_name:
        tagged = [
            i for i in instances
            if any(i.tags.get(k) == cluster_name for k in CLUSTER_TAGS)
            and i.tags.get("component", "").lower() == "tikv"
            and i.tags.get("Name") and i.tags["Name"].lower() in host
        ]
        if len(tagged) == 1:
            return tagged[0].instance_id
    return None


@dataclass(frozen=True)
class FieldChange:
    entity_kind: str
    entity_id: str
    field: str
    old: Any
    new: Any


def diff_fields(entity_kind: str, entity_id: str, old: Mapping[str, Any], new: Mapping[str, Any],
                fields: Sequence[str]) -> list[FieldChange]:
    """The fields whose value changed between two observations of an entity."""
    return [FieldChange(entity_kind, entity_id, f, old.get(f), new.get(f)) for f in fields if old.get(f) != new.get(f)]


# --- shell ------------------------------------------------------------------------------------------------


@dataclass
class Inventory:
    instances: list[InstanceInfo]
    volumes: list[VolumeInfo]
    instance_type_pages: list[dict[str, Any]]
    api_calls: int


def fetch_inventory(ec2: Any, *, known_types: Iterable[str] = ()) -> Inventory:
    """Describe every instance and volume of the region, and the instance types not already known."""
    calls = 0
    instance_pages = []
    for page in ec2.get_paginator("describe_instances").paginate(PaginationConfig={"PageSize": 1000}):
        instance_pages.append(page)
        calls += 1
    volume_pages = []
    for page in ec2.get_paginator("describe_volumes").paginate(PaginationConfig={"PageSize": 500}):
        volume_pages.append(page)
        calls += 1
    instances = parse_instances(instance_pages)
    wanted = sorted({i.instance_type for i in instances} - set(known_types))
    type_pages: list[dict[str, Any]] = []
    # DescribeInstanceTypes takes at most 100 names per request (EC2 API reference).
    for k in range(0, len(wanted), 100):
        for page in ec2.get_paginator("describe_instance_types").paginate(InstanceTypes=wanted[k:k + 100]):
            type_pages.append(dict(page))
            calls += 1
    return Inventory(instances, parse_volumes(volume_pages), type_pages, calls)
