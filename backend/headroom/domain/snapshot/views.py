"""Read a snapshot: find series, turn them into arrays, and derive IOPS and MiB/s views.

CloudWatch series hold sums per step; the views divide by the step and apply EBS's I/O accounting
(`headroom.domain.physics.io`: 256 KiB chunks on SSD, 1 MiB on HDD) to give the IOPS an EBS limit sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
from numpy.typing import NDArray

from headroom.domain.catalog import volume_type_spec
from headroom.domain.physics.io import HDD_CHUNK_KIB, SSD_CHUNK_KIB, counted_ops
from headroom.domain.snapshot.schema import EntityKind, Node, Series, Snapshot, Volume

Array = NDArray[np.float64]
MIB = 1024.0 * 1024.0


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
    """Return a series' values as floats, NaN for gaps (all NaN for a missing series of `length`)."""
    if series is None:
        return np.full(length or 0, np.nan)
    return np.array([np.nan if v is None else v for v in series.values], dtype=np.float64)


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


def _chunk_kib(volume_type: str) -> int:
    if volume_type == "standard":
        return SSD_CHUNK_KIB
    return HDD_CHUNK_KIB if volume_type_spec(volume_type).media == "hdd" else SSD_CHUNK_KIB


def _counted(ops: Array, nbytes: Array, chunk_kib: int) -> Array:
    out = np.full(len(ops), np.nan)
    for i, (o, b) in enumerate(zip(ops.tolist(), nbytes.tolist(), strict=True)):
        if not (np.isnan(o) or np.isnan(b)):
            out[i] = counted_ops(o, b, chunk_kib)
    return out


@dataclass(frozen=True)
class IoView:
    """Per-step rates of one volume or instance, derived from CloudWatch sums."""

    timestamps: list[datetime]
    read_iops: Array
    write_iops: Array
    counted_iops: Array  # reads + writes in EBS chunk units (what the IOPS limit sees)
    read_mibps: Array
    write_mibps: Array
    avg_read_kib: Array
    avg_write_kib: Array
    read_latency_ms: Array  # NaN for instances (CloudWatch has no per-instance latency)
    write_latency_ms: Array
    queue_length: Array

    @property
    def iops(self) -> Array:
        """Return read + write IOPS as issued."""
        return self.read_iops + self.write_iops

    @property
    def mibps(self) -> Array:
        """Return read + write MiB/s."""
        return self.read_mibps + self.write_mibps


def _view(
    snapshot: Snapshot, kind: EntityKind, entity_id: str, names: tuple[str, str, str, str], chunk_kib: int
) -> IoView:
    r_ops_s = find_series(snapshot, kind, entity_id, names[0])
    if r_ops_s is None:
        raise KeyError(f"{kind} {entity_id} has no {names[0]} series")
    n = len(r_ops_s.values)
    step = float(r_ops_s.step_seconds)
    r_ops, w_ops = values(r_ops_s), values(find_series(snapshot, kind, entity_id, names[1]), n)
    r_b = values(find_series(snapshot, kind, entity_id, names[2]), n)
    w_b = values(find_series(snapshot, kind, entity_id, names[3]), n)
    with np.errstate(invalid="ignore", divide="ignore"):
        avg_r = np.where(r_ops > 0, r_b / r_ops / 1024.0, np.nan)
        avg_w = np.where(w_ops > 0, w_b / w_ops / 1024.0, np.nan)
        if kind == "volume":
            rt = values(find_series(snapshot, kind, entity_id, "ebs.total_read_time"), n)
            wt = values(find_series(snapshot, kind, entity_id, "ebs.total_write_time"), n)
            r_lat = np.where(r_ops > 0, rt / r_ops * 1000.0, np.nan)
            w_lat = np.where(w_ops > 0, wt / w_ops * 1000.0, np.nan)
            qlen = values(find_series(snapshot, kind, entity_id, "ebs.queue_length"), n)
        else:
            r_lat = w_lat = qlen = np.full(n, np.nan)
    counted = (_counted(r_ops, r_b, chunk_kib) + _counted(w_ops, w_b, chunk_kib)) / step
    return IoView(
        timestamps=r_ops_s.timestamps(),
        read_iops=r_ops / step,
        write_iops=w_ops / step,
        counted_iops=counted,
        read_mibps=r_b / step / MIB,
        write_mibps=w_b / step / MIB,
        avg_read_kib=avg_r,
        avg_write_kib=avg_w,
        read_latency_ms=r_lat,
        write_latency_ms=w_lat,
        queue_length=qlen,
    )


def volume_io(snapshot: Snapshot, volume_id: str) -> IoView:
    """Return IOPS (issued and counted), MiB/s, average I/O size, latency and queue of one volume."""
    vol = volume(snapshot, volume_id)
    names = ("ebs.read_ops", "ebs.write_ops", "ebs.read_bytes", "ebs.write_bytes")
    return _view(snapshot, "volume", volume_id, names, _chunk_kib(vol.type))


def instance_io(snapshot: Snapshot, instance_id: str) -> IoView:
    """Return the EBS IOPS and MiB/s of one instance (all its volumes), from AWS/EC2 sums."""
    names = ("ec2.ebs_read_ops", "ec2.ebs_write_ops", "ec2.ebs_read_bytes", "ec2.ebs_write_bytes")
    return _view(snapshot, "instance", instance_id, names, SSD_CHUNK_KIB)


def block_cache_hit_ratio(snapshot: Snapshot, node_id: str) -> Array:
    """Return hit / (hit + miss) of a node's KV block cache per step (NaN without reads)."""
    hit = find_series(snapshot, "node", node_id, "tikv.block_cache_hit")
    miss = find_series(snapshot, "node", node_id, "tikv.block_cache_miss")
    h = values(hit)
    m = values(miss, len(h))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(h + m > 0, h / (h + m), np.nan)
