"""Apply proposed changes to a snapshot's inventory and config (pure). The what-if (whatif.py) and the grouping
of findings (groups.py) both use it; it imports neither the engine nor them.

API (pure):
    apply_changes(snapshot, changes) -> Snapshot      (see whatif.py's docstring for what each change does)
    WhatIfError                                       a change that cannot be applied
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import ValidationError

from headroom.domain.catalog import (
    PROVISIONED_IOPS_TYPES,
    PROVISIONED_THROUGHPUT_TYPES,
    CatalogError,
    instance_limits,
    volume_limits,
)
from headroom.domain.model import Change
from headroom.domain.physics.burst import Gp2Bucket, drain_demand, replay_balance
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot import views
from headroom.domain.snapshot.schema import Instance, Node, Series, Snapshot, Volume, config_set

GIB = 1024.0**3

VOLUME_KEYS = {
    "volume.type": "type",
    "volume.iops": "iops",
    "volume.throughput": "throughput_mibps",
    "volume.size": "size_gib",
}
_STALE_VOLUME_SERIES = {mid.EBS_BURST_BALANCE, mid.EBS_IOPS_EXCEEDED_CHECK, mid.EBS_THROUGHPUT_EXCEEDED_CHECK}
_STALE_INSTANCE_SERIES = {mid.EC2_EBS_IO_BALANCE, mid.EC2_EBS_BYTE_BALANCE}


class WhatIfError(ValueError):
    """A change that cannot be applied (unknown key, entity or value)."""


def _target_volume(change: Change, volumes: dict[str, Volume]) -> str:
    vid = change.entity.volume() if change.entity is not None else None
    if vid is None or vid not in volumes:
        raise WhatIfError(f"{change.key}: needs the id of a volume in the snapshot, got {vid!r}")
    return vid


def _target_instance(change: Change, instances: dict[str, Instance]) -> str:
    iid = change.entity.instance() if change.entity is not None else None
    if iid is None or iid not in instances:
        raise WhatIfError(f"{change.key}: needs the id of an instance in the snapshot, got {iid!r}")
    return iid


def _coerce(key: str, value: Any) -> Any:
    if key == "volume.type":
        return str(value)
    if key == "volume.iops":
        return int(value)
    return float(value)


def apply_changes(snapshot: Snapshot, changes: Sequence[Change]) -> Snapshot:
    """Return the snapshot as it would be with the changes applied (inventory and config only)."""
    volumes = {v.id: v for v in snapshot.volumes}
    instances = {i.id: i for i in snapshot.instances}
    nodes = {n.id: n for n in snapshot.nodes}
    touched_volumes: set[str] = set()
    touched_instances: set[str] = set()
    for change in changes:
        if change.target == "aws" and change.key in VOLUME_KEYS:
            vid = _target_volume(change, volumes)
            try:
                value = _coerce(change.key, change.proposed)
            except (TypeError, ValueError):
                raise WhatIfError(f"{change.key}: bad value {change.proposed!r}") from None
            update: dict[str, Any] = {VOLUME_KEYS[change.key]: value}
            if change.key == "volume.type" and value not in PROVISIONED_IOPS_TYPES:
                update.update(iops=None, throughput_mibps=None)
            if change.key == "volume.type" and value not in PROVISIONED_THROUGHPUT_TYPES:
                update["throughput_mibps"] = None
            try:
                volumes[vid] = type(volumes[vid]).model_validate({**volumes[vid].model_dump(), **update})
            except ValidationError as exc:
                first = exc.errors()[0]
                raise WhatIfError(f"{change.key}: {change.proposed!r} is not allowed ({first['msg']})") from None
            touched_volumes.add(vid)
        elif change.target == "aws" and change.key == "instance.type":
            iid = _target_instance(change, instances)
            try:
                lim = instance_limits(str(change.proposed))
            except CatalogError as exc:
                raise WhatIfError(f"instance.type: {exc}") from None
            inst = instances[iid]
            instances[iid] = inst.model_copy(
                update={
                    "type": lim.name,
                    "vcpus": lim.vcpus or inst.vcpus,
                    "memory_gib": lim.memory_gib or inst.memory_gib,
                }
            )
            for nid, n in nodes.items():
                if n.instance_id == iid:
                    nodes[nid] = n.model_copy(
                        update={
                            "instance_type": lim.name,
                            "vcpus": lim.vcpus or n.vcpus,
                            "memory_gib": lim.memory_gib or n.memory_gib,
                        }
                    )
            touched_instances.add(iid)
        elif change.target == "tikv":
            scope = change.entity.tikv_node() if change.entity is not None else None
            wanted = [scope] if scope else list(nodes)
            for nid in wanted:
                if nid not in nodes:
                    matches = [k for k, n in nodes.items() if n.status_address == nid or n.address == nid]
                    if not matches:
                        raise WhatIfError(f"{change.key}: no node {nid!r} in the snapshot")
                    nid = matches[0]
                n = nodes[nid]
                nodes[nid] = n.model_copy(
                    update={"config": config_set(n.config, change.key, change.proposed)}
                )
        else:
            raise WhatIfError(f"cannot apply {change.target} change {change.key!r}")
    for vid in sorted(touched_volumes):  # the new configuration must be one AWS accepts (catalog rules)
        v = Volume.model_validate(volumes[vid].model_dump())
        try:
            vlim = volume_limits(
                v.type,
                v.size_gib,
                v.iops if v.type in PROVISIONED_IOPS_TYPES else None,
                v.throughput_mibps if v.type in PROVISIONED_THROUGHPUT_TYPES else None,
            )
        except CatalogError as exc:
            raise WhatIfError(f"volume {vid}: {exc}") from None
        if not vlim.valid:
            raise WhatIfError(f"volume {vid}: {'; '.join(vlim.problems)}")
    replayed = [
        r for vid in sorted(touched_volumes)
        if (r := _resized_gp2_balance(snapshot, vid, volumes[vid])) is not None
    ]
    series = [
        s
        for s in snapshot.series
        if not (
            s.entity.kind == "volume" and s.entity.id in touched_volumes and s.metric in _STALE_VOLUME_SERIES
        )
        and not (
            s.entity.kind == "instance"
            and s.entity.id in touched_instances
            and s.metric in _STALE_INSTANCE_SERIES
        )
    ]
    series = _grown_disks(snapshot, volumes, series + replayed)
    return snapshot.model_copy(
        update={
            "volumes": [volumes[v.id] for v in snapshot.volumes],
            "instances": [instances[i.id] for i in snapshot.instances],
            # A changed node is validated again (its config is redacted like any other); the others are kept.
            "nodes": [
                n if nodes[n.id] is n else Node.model_validate(nodes[n.id].model_dump())
                for n in snapshot.nodes
            ],
            "series": series,
        }
    )


def _resized_gp2_balance(snapshot: Snapshot, vid: str, after: Volume) -> Series | None:
    """The BurstBalance a gp2 volume resized to `after` (still gp2, still bursting) would have shown over the window.

    Its old balance no longer holds (the baseline changed), and dropping it would read as "no burst problem", so
    the new bucket (AWS gp2: 5.4 M credits earned at 3 IOPS per GiB, docs/reference/gp2-burst.md#the-credit-bucket) is
    replayed from the window's first balance over the volume's counted IOPS. Where the old bucket was empty the
    served rate was its baseline cap, not what the workload asked for: there the replay draws the drain-period
    demand (the rate served while it had credits), the figure the burst rule sizes its fix on. None for a volume
    that was not gp2, is not gp2 now, kept its size, or no longer bursts (>= 1,000 GiB).
    """
    before = next((v for v in snapshot.volumes if v.id == vid), None)
    if before is None or before.type != "gp2" or after.type != "gp2" or after.size_gib == before.size_gib:
        return None
    bucket = Gp2Bucket.for_size(after.size_gib)
    old = views.find_series(snapshot, "volume", vid, mid.EBS_BURST_BALANCE)
    if old is None or not bucket.bursts:
        return None
    window = snapshot.window
    balance = views.aligned(old, window)
    known = np.flatnonzero(np.isfinite(balance))
    if not known.size:
        return None
    served = np.array(views.volume_io(snapshot, vid).counted_iops, dtype=float)
    cap = drain_demand(served, Gp2Bucket.for_size(before.size_gib).baseline_rate)
    demand = served.copy()
    if np.isfinite(cap):
        empty = np.isfinite(balance) & (balance <= 0.0)
        demand[empty] = np.fmax(demand[empty], cap)
    first = int(known[0])
    values = replay_balance(bucket, float(balance[first]), demand[first:], window.step_seconds)
    return Series(entity=old.entity, metric=old.metric, unit=old.unit, statistic=old.statistic, labels=old.labels,
                  start=window.start, step_seconds=window.step_seconds,
                  values=[None] * first + [round(float(v), 3) for v in values])


_DISK_SERIES = (mid.TIKV_STORE_CAPACITY_BYTES, mid.TIKV_STORE_AVAILABLE_BYTES, mid.NODE_FS_SIZE_BYTES, mid.NODE_FS_AVAIL_BYTES)


def _grown_disks(snapshot: Snapshot, volumes: dict[str, Volume], series: list[Any]) -> list[Any]:
    """A data volume resized: its store's capacity and available space as TiKV would report them once the
    filesystem is grown (AWS: Extend the file system after resizing an EBS volume), by the size added times the
    filesystem's share of the volume today (its metadata stays a share). Other series are kept as they are."""
    grown: dict[str, tuple[float, float]] = {}  # node id -> (bytes added to capacity, factor for fs series)
    for n in snapshot.nodes:
        old = sum(v.size_gib for v in snapshot.volumes if v.id in n.data_volume_ids)
        new = sum(volumes[vid].size_gib for vid in n.data_volume_ids if vid in volumes)
        if n.data_volume_ids and new != old and old > 0:
            grown[n.id] = (new - old, new / old)  # GiB added, and the size ratio
    if not grown:
        return series
    out = []
    for s in series:
        if s.entity.kind == "node" and s.entity.id in grown and s.metric in _DISK_SERIES:
            added_gib, _ = grown[s.entity.id]
            old_gib = sum(v.size_gib for v in snapshot.volumes if v.id in next(
                n for n in snapshot.nodes if n.id == s.entity.id).data_volume_ids)
            capacity = next((x for x in reversed(s.values) if x is not None), None) \
                if s.metric in (mid.TIKV_STORE_CAPACITY_BYTES, mid.NODE_FS_SIZE_BYTES) else None
            share = 1.0
            cap_series = next((c for c in series if c.entity == s.entity and c.metric == (
                mid.NODE_FS_SIZE_BYTES if s.metric.startswith("node.") else mid.TIKV_STORE_CAPACITY_BYTES)
                and c.labels.get("mountpoint") == s.labels.get("mountpoint")), None)  # the size also has fstype
            last_cap = capacity if capacity is not None else (
                next((x for x in reversed(cap_series.values) if x is not None), None) if cap_series else None)
            if last_cap is not None and old_gib > 0:
                share = min(1.0, last_cap / (old_gib * GIB))
            delta = added_gib * GIB * share
            s = s.model_copy(update={"values": [None if x is None else max(x + delta, 0.0) for x in s.values]})
        out.append(s)
    return out
