"""Read a snapshot: find series, turn them into arrays, and derive IOPS and MiB/s views.

CloudWatch series hold sums per period; each series keeps its own period (`Series.step_seconds`: 1 minute for
AWS/EBS, 5 minutes for AWS/EC2 on basic monitoring). Before two series are compared they are put on the window's
grid by `headroom.domain.snapshot.align` (Sums spread over their period so the per-second rate is kept, levels
held; docs/series-alignment.md); the views feed the aligned sums to `headroom.domain.derived` (rates, EBS's I/O
accounting in 256 KiB chunks on SSD and 1 MiB on HDD, latency, hit ratios), the one place those formulas live.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from headroom.domain.derived import IoView, hit_ratio, io_chunk_kib, io_view
from headroom.domain.physics.io import SSD_CHUNK_KIB
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.align import align_series
from headroom.domain.snapshot.schema import EntityKind, Node, Series, Snapshot, Volume, Window, config_get

Array = NDArray[np.float64]

__all__ = [
    "IO_METRICS",
    "IoView",
    "aligned",
    "DiskView",
    "block_cache_hit_ratio",
    "disk_view",
    "find_series",
    "instance_io",
    "io_view_of",
    "node",
    "values",
    "volume",
    "volume_io",
]


def find_series(
    snapshot: Snapshot,
    kind: EntityKind,
    entity_id: str,
    metric: str,
    labels: dict[str, str] | None = None,
) -> Series | None:
    """Return the series of one entity and metric (and labels, if given), or None when absent."""
    for s in snapshot.series:
        if (
            s.entity.kind == kind
            and s.entity.id == entity_id
            and s.metric == metric
            and (labels is None or all(s.labels.get(k) == v for k, v in labels.items()))
        ):
            return s
    return None


def values(series: Series | None, length: int | None = None) -> Array:
    """Return a series' values at its own step as a read-only float array, NaN for gaps (all NaN for a missing
    series of `length`); compare series only through `aligned`."""
    if series is None:
        return np.full(length or 0, np.nan)
    return series.array


def aligned(series: Series | None, window: Window) -> Array:
    """Return a series on the window's grid (`window.points` values, NaN for gaps; all NaN when absent).

    The array is read-only. A series at the window's own step and start is returned as its values.
    """
    if series is None:
        return np.full(window.points, np.nan)
    if (
        series.start == window.start
        and series.step_seconds == window.step_seconds
        and len(series.values) == window.points
    ):
        return series.array  # already on the grid (and read-only): no copy
    out = align_series(series, window)
    out.flags.writeable = False
    return out


def node(snapshot: Snapshot, node_id: str) -> Node:
    """Return a node by id (KeyError if absent)."""
    for n in snapshot.nodes:
        if n.id == node_id:
            return n
    raise KeyError(node_id)


def volume(snapshot: Snapshot, volume_id: str) -> Volume:
    """Return a volume by id (KeyError if absent)."""
    for v in snapshot.volumes:
        if v.id == volume_id:
            return v
    raise KeyError(volume_id)


# The CloudWatch sums an I/O view is built from: read ops, write ops, read bytes, write bytes.
IO_METRICS: dict[str, tuple[str, str, str, str]] = {
    "volume": (mid.EBS_READ_OPS, mid.EBS_WRITE_OPS, mid.EBS_READ_BYTES, mid.EBS_WRITE_BYTES),
    "instance": (mid.EC2_EBS_READ_OPS, mid.EC2_EBS_WRITE_OPS, mid.EC2_EBS_READ_BYTES, mid.EC2_EBS_WRITE_BYTES),
}


def io_view_of(
    kind: EntityKind, window: Window, read: Callable[[str], Array | None], chunk_kib: int
) -> IoView:
    """Return the I/O view of a volume or instance on the window's grid; `read(metric)` gives the values of its
    series aligned to the window (`aligned`; None when absent: read as gaps).

    Sums aligned to the window keep their per-second rate (a 5-minute Sum spread over five 1-minute steps), so
    dividing each step's sum by the window step gives the same rate as dividing the series' own Sum by its own
    period (docs/series-alignment.md).
    """
    n = window.points

    def get(metric: str) -> Array:
        arr = read(metric)
        return np.full(n, np.nan) if arr is None else arr

    names = IO_METRICS[kind]
    volume_only = kind == "volume"
    return io_view(
        start=window.start,
        step_seconds=window.step_seconds,
        chunk_kib=chunk_kib,
        read_ops=get(names[0]),
        write_ops=get(names[1]),
        read_bytes=get(names[2]),
        write_bytes=get(names[3]),
        read_time=get(mid.EBS_TOTAL_READ_TIME) if volume_only else None,
        write_time=get(mid.EBS_TOTAL_WRITE_TIME) if volume_only else None,
        queue_length=get(mid.EBS_QUEUE_LENGTH) if volume_only else None,
    )


def _entity_io(snapshot: Snapshot, kind: EntityKind, entity_id: str, chunk_kib: int) -> IoView:
    first = find_series(snapshot, kind, entity_id, IO_METRICS[kind][0])
    if first is None:
        raise KeyError(f"{kind} {entity_id} has no {IO_METRICS[kind][0]} series")

    def read(metric: str) -> Array | None:
        found = find_series(snapshot, kind, entity_id, metric)
        return None if found is None else aligned(found, snapshot.window)

    return io_view_of(kind, snapshot.window, read, chunk_kib)


def volume_io(snapshot: Snapshot, volume_id: str) -> IoView:
    """Return IOPS (issued and counted), MiB/s, average I/O size, latency and queue of one volume."""
    return _entity_io(snapshot, "volume", volume_id, io_chunk_kib(volume(snapshot, volume_id).type))


def instance_io(snapshot: Snapshot, instance_id: str) -> IoView:
    """Return the EBS IOPS and MiB/s of one instance (all its volumes), from AWS/EC2 sums."""
    return _entity_io(snapshot, "instance", instance_id, SSD_CHUNK_KIB)


def block_cache_hit_ratio(snapshot: Snapshot, node_id: str) -> Array:
    """Return hit / (hit + miss) of a node's KV block cache per window step (NaN without reads)."""
    hit = find_series(snapshot, "node", node_id, mid.TIKV_BLOCK_CACHE_HIT)
    miss = find_series(snapshot, "node", node_id, mid.TIKV_BLOCK_CACHE_MISS)
    return hit_ratio(aligned(hit, snapshot.window), aligned(miss, snapshot.window))


GIB = 1024.0**3


@dataclass(frozen=True)
class DiskView:
    """A node's data disk as TiKV, the host and AWS see it, on the window's grid (bytes; NaN for gaps).

    capacity / available: what TiKV reports to PD (its store heartbeat: capacity = the data filesystem's size,
    or raftstore.capacity when smaller; available = min(capacity - used, the filesystem's free space)).
    used: TiKV's own bytes (SST files, snapshots). fs_size / fs_avail: node_exporter's filesystem that holds
    `storage.data-dir` (`mountpoint`; None when no mount matches). volume_gib: the data volume(s)' size in AWS
    (a RAID 0 array adds its stripes; None without one)."""

    capacity: Array
    available: Array
    used: Array
    fs_size: Array | None
    fs_avail: Array | None
    mountpoint: str | None
    volume_gib: float | None
    fstype: str | None = None  # node_exporter's fstype label of that mount (xfs, ext4), None when not reported

    @property
    def has_store_stats(self) -> bool:
        """TiKV's capacity and available series are present (TiKV exports them since its first releases)."""
        return bool(np.isfinite(self.capacity).any() and np.isfinite(self.available).any())


def _mount_of(data_dir: str, mounts: list[str]) -> str | None:
    """The mount point holding `data_dir`: the longest mount that is a path prefix of it."""
    path = data_dir.rstrip("/") or "/"
    holding = [m for m in mounts if path == m or path.startswith(m.rstrip("/") + "/")]
    return max(holding, key=len) if holding else None


def data_mount(data_dir: object, mounts: Collection[str]) -> str | None:
    """The mount holding TiKV's `storage.data-dir` (an absolute path) among a host's mounts; the only mount when the
    data dir is not known or matches none and the host has one real filesystem; else None."""
    mount = _mount_of(data_dir, list(mounts)) if isinstance(data_dir, str) and data_dir.startswith("/") else None
    if mount is None and len(mounts) == 1:
        mount = next(iter(mounts))  # the host has one real filesystem: TiKV's data is on it
    return mount


def disk_view(snapshot: Snapshot, node_id: str) -> DiskView:
    """Return a node's data disk (see DiskView); series that are absent are all NaN."""
    n = node(snapshot, node_id)
    window = snapshot.window

    def series(metric: str) -> Array:
        return aligned(find_series(snapshot, "node", node_id, metric), window)

    mounts: dict[str, Series] = {}
    for s in snapshot.series:
        # a series stored before the fstype label was collected gives way to the one with it
        if (s.entity.kind == "node" and s.entity.id == node_id and s.metric == mid.NODE_FS_SIZE_BYTES
                and "mountpoint" in s.labels and (s.labels["mountpoint"] not in mounts or "fstype" in s.labels)):
            mounts[s.labels["mountpoint"]] = s
    mount = data_mount(config_get(n.config, "storage.data-dir"), list(mounts))
    fs_size = fs_avail = None
    if mount is not None:
        fs_size = aligned(mounts[mount], window)
        fs_avail = aligned(find_series(snapshot, "node", node_id, mid.NODE_FS_AVAIL_BYTES, {"mountpoint": mount}), window)
    sizes = [volume(snapshot, v).size_gib for v in n.data_volume_ids]
    return DiskView(
        capacity=series(mid.TIKV_STORE_CAPACITY_BYTES),
        available=series(mid.TIKV_STORE_AVAILABLE_BYTES),
        used=series(mid.TIKV_STORE_USED_BYTES),
        fs_size=fs_size,
        fs_avail=fs_avail,
        mountpoint=mount,
        volume_gib=float(sum(sizes)) if sizes else None,
        fstype=mounts[mount].labels.get("fstype") if mount is not None else None,
    )
