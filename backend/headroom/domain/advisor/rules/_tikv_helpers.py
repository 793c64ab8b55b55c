"""Helpers shared by the TiKV rule families (block cache, block size, thread pools, compaction, raft, Titan).

Not a rules module (it exposes no RULES). Everything here is pure: a `Context` in, numbers out.

- `data_path(ctx, node)`: the node's data-volume I/O (summed over RAID stripes) next to its effective
  ceilings per step: the data volumes' own IOPS / MiB/s ceilings and the instance's EBS limits, whichever is
  tighter at each step (docs/reference/ec2-ebs-limits.md#limits-table: "bounded by the instance limit or the sum of its attached volumes").
- `tikv_change(ctx, node, key, proposed, reason)`: a `Change` whose `current` is the node's effective
  value (config, else the version default) and whose `online` comes from tikvconf's online table.
- Size formatting as tikv.toml writes it ("4GiB", "16KiB").
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from headroom.domain import derived
from headroom.domain import references as refs
from headroom.domain.advisor.context import Array, Context
from headroom.domain.advisor.rules._common import AT_CEILING_FRACTION, window_evidence
from headroom.domain.model import Change, Evidence, Measure, SeriesRef
from headroom.domain.physics.ceilings import instance_in_force
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.schema import Node, Volume
from headroom.domain.tikvconf.keys import require_valid_key
from headroom.domain.tikvconf.online import can_change_online
from headroom.domain.units import format_quantity, format_size

KIB = 1024
MIB = 1024**2
GIB = 1024**3

Binding = Literal["volume", "instance"]


# ----------------------------------------------------------------------------------------------------
# Config values


def config_value(ctx: Context, node: Node, key: str) -> Any:
    """Return a key's effective value on a node (configured, else the version default; None if unknown)."""
    return ctx.config(node.id, key).value


def config_bytes(ctx: Context, node: Node, key: str) -> int | None:
    """Return a size key's effective value in bytes (None when unknown)."""
    return ctx.config_bytes(node.id, key)


def config_int(ctx: Context, node: Node, key: str) -> int | None:
    """Return an integer key's effective value (None when unknown or not an integer)."""
    value = config_value(ctx, node, key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def config_bool(ctx: Context, node: Node, key: str) -> bool | None:
    """Return a boolean key's effective value (None when unknown)."""
    value = config_value(ctx, node, key)
    return value if isinstance(value, bool) else None


def size_text(n_bytes: int) -> str:
    """Write a size as tikv.toml does: the largest exact binary unit ("4GiB", "16KiB", "300MiB")."""
    text = format_size(n_bytes)
    return text if isinstance(text, str) else f"{text}B"


def size_words(n_bytes: float) -> str:
    """Write a size in a sentence as every other number there is written ("14.4 GiB", "400 MiB", "16 KiB"):
    size_text's tikv.toml spelling ("14745MiB") is for the config value itself, never beside a "14.4 GiB"."""
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n_bytes >= size:
            return format_quantity(n_bytes / size, unit)
    return format_quantity(n_bytes, "B")


def rate_words(n_bytes_per_second: float) -> str:
    """Write a byte rate in a sentence: "400 MiB/s" (rocksdb.rate-bytes-per-sec's value, in the sentence's style)."""
    for unit, size in (("GiB/s", 1024**3), ("MiB/s", 1024**2), ("KiB/s", 1024)):
        if n_bytes_per_second >= size:
            return format_quantity(n_bytes_per_second / size, unit)
    return format_quantity(n_bytes_per_second, "B/s")


def gib_floor(n_bytes: float) -> int:
    """Round a byte count down to whole GiB (at least 1 GiB), in bytes."""
    return max(1, math.floor(n_bytes / GIB)) * GIB


def mib_floor(n_bytes: float) -> int:
    """Round a byte count down to whole MiB (at least 1 MiB), in bytes."""
    return max(1, math.floor(n_bytes / MIB)) * MIB


def tikv_change(ctx: Context, node: Node, key: str, proposed: Any, reason: str) -> Change:
    """Return a tikv.toml change for one node: current from its config / version default, online from tikvconf."""
    require_valid_key(key)  # a rule must never emit a key TiKV does not have
    current = config_value(ctx, node, key)
    return Change(
        target="tikv",
        key=key,
        current=current,
        proposed=proposed,
        online=can_change_online(key, current, proposed, node.tikv_version),
        reason=reason,
        entity=ctx.entity_for_node(node.id),
    )


# ----------------------------------------------------------------------------------------------------
# The node's data path against its ceilings


@dataclass(frozen=True)
class DataPath:
    """A node's data-volume I/O per step and the effective ceilings it runs against."""

    node_id: str
    volume_ids: tuple[str, ...]
    instance_id: str
    read_iops: Array  # issued
    write_iops: Array
    counted_iops: Array  # in EBS chunk units (what the IOPS limit sees)
    read_mibps: Array
    write_mibps: Array
    mibps: Array
    read_latency_ms: Array
    write_latency_ms: Array
    iops_util: Array  # max(volume-level, instance-level) utilisation of the IOPS ceilings
    mibps_util: Array
    iops_ceiling: Array  # the ceiling of the binding component, in the node's own units
    mibps_ceiling: Array
    iops_binding: Binding
    mibps_binding: Binding

    @property
    def read_share_iops(self) -> Array:
        """Return the share of issued I/Os that are reads, per step."""
        total = self.read_iops + self.write_iops
        with np.errstate(invalid="ignore", divide="ignore"):
            out: Array = np.where(total > 0, self.read_iops / total, np.nan)
        return out


def _instance_ceilings(ctx: Context, instance_id: str, n: int) -> tuple[Array, Array] | None:
    """Return the instance's EBS IOPS and MiB/s ceilings in force per step (physics.ceilings, the one rule)."""
    lim = ctx.instance_limits(instance_id)
    if lim is None:
        return None
    return (
        instance_in_force(lim, "iops", ctx.series("instance", instance_id, mid.EC2_EBS_IO_BALANCE), n),
        instance_in_force(lim, "throughput", ctx.series("instance", instance_id, mid.EC2_EBS_BYTE_BALANCE), n),
    )


_util = derived.utilisation


def _sum_rows(rows: list[Array]) -> Array:
    """Return the element-wise sum of same-length arrays (one array: itself, no stacking)."""
    if len(rows) == 1:
        return rows[0]
    out: Array = np.sum(np.vstack(rows), axis=0)
    return out


def data_path(ctx: Context, node: Node) -> DataPath | None:
    """Return the node's data-volume I/O against its effective ceilings (None when a series is missing).

    Computed once per run and node (several rule families read it). It reads the node's data volumes and its
    instance (limits and series), never its config: a what-if that changes only the config, or other nodes'
    volumes, reuses the run's (Context.memo's depends_on)."""
    key = ("data_path", node.id, node.instance_id, *node.data_volume_ids)
    depends = (("instance", node.instance_id), *(("volume", v) for v in node.data_volume_ids))
    return ctx.memo(key, lambda: _data_path(ctx, node), depends)


def _data_path(ctx: Context, node: Node) -> DataPath | None:
    vols: list[Volume] = [ctx.volume(v) for v in node.data_volume_ids if v in {x.id for x in ctx.volumes}]
    if not vols:
        return None
    views = [ctx.volume_io(v.id) for v in vols]
    iceils = [ctx.volume_iops_ceiling(v.id) for v in vols]
    mceils = [ctx.volume_mibps_ceiling(v.id) for v in vols]
    if any(x is None for x in (*views, *iceils, *mceils)):
        return None
    v_views = [v for v in views if v is not None]
    n = len(v_views[0].counted_iops)
    if any(len(v.counted_iops) != n for v in v_views):
        return None

    def total(attr: str) -> Array:
        acc = np.zeros(n)
        for view in v_views:
            acc = acc + getattr(view, attr)
        return acc

    def avg(attr: str) -> Array:
        if len(v_views) == 1:  # the mean of one volume is its own series (NaN stays NaN)
            one: Array = getattr(v_views[0], attr)
            return one
        stacked = np.vstack([getattr(view, attr) for view in v_views])
        with warnings.catch_warnings():  # all-NaN steps (no latency series) stay NaN, silently
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.asarray(np.nanmean(stacked, axis=0), dtype=np.float64)

    counted, mibps = total("counted_iops"), total("mibps")
    vol_iops_ceiling = _sum_rows([c for c in iceils if c is not None])
    vol_mibps_ceiling = _sum_rows([c for c in mceils if c is not None])
    vol_iops_util, vol_mibps_util = _util(counted, vol_iops_ceiling), _util(mibps, vol_mibps_ceiling)
    iops_util, mibps_util = vol_iops_util, vol_mibps_util
    iops_ceiling, mibps_ceiling = vol_iops_ceiling, vol_mibps_ceiling
    iops_binding: Binding = "volume"
    mibps_binding: Binding = "volume"
    inst = _instance_ceilings(ctx, node.instance_id, n)
    inst_view = ctx.instance_io(node.instance_id)
    if inst is not None and inst_view is not None and len(inst_view.counted_iops) == n:
        inst_iops_util = _util(inst_view.counted_iops, inst[0])
        inst_mibps_util = _util(inst_view.mibps, inst[1])
        iops_util = np.fmax(vol_iops_util, inst_iops_util)
        mibps_util = np.fmax(vol_mibps_util, inst_mibps_util)
        # Express the instance's ceiling in the node's own traffic: what this node's data path can still
        # move when the instance is the tighter limit (its share of the instance's total).
        with np.errstate(invalid="ignore", divide="ignore"):
            inst_iops_for_node = np.where(inst_iops_util > 0, counted / inst_iops_util, inst[0])
            inst_mibps_for_node = np.where(inst_mibps_util > 0, mibps / inst_mibps_util, inst[1])
        if np.nanmedian(inst_iops_util - vol_iops_util) > 0:
            iops_binding, iops_ceiling = "instance", np.fmin(vol_iops_ceiling, inst_iops_for_node)
        if np.nanmedian(inst_mibps_util - vol_mibps_util) > 0:
            mibps_binding, mibps_ceiling = "instance", np.fmin(vol_mibps_ceiling, inst_mibps_for_node)
    return DataPath(
        node_id=node.id,
        volume_ids=tuple(v.id for v in vols),
        instance_id=node.instance_id,
        read_iops=total("read_iops"),
        write_iops=total("write_iops"),
        counted_iops=counted,
        read_mibps=total("read_mibps"),
        write_mibps=total("write_mibps"),
        mibps=mibps,
        read_latency_ms=avg("read_latency_ms"),
        write_latency_ms=avg("write_latency_ms"),
        iops_util=np.asarray(iops_util, dtype=np.float64),
        mibps_util=np.asarray(mibps_util, dtype=np.float64),
        iops_ceiling=np.asarray(iops_ceiling, dtype=np.float64),
        mibps_ceiling=np.asarray(mibps_ceiling, dtype=np.float64),
        iops_binding=iops_binding,
        mibps_binding=mibps_binding,
    )


def ceiling_source(path: DataPath, kind: Literal["iops", "mibps"]) -> str:
    """Where a data path's binding ceiling comes from: the instance's EBS limits or the volumes' (AWS)."""
    binding = path.iops_binding if kind == "iops" else path.mibps_binding
    return refs.EBS_OPTIMIZED.cite() if binding == "instance" else refs.EBS_VOLUME_TYPES.cite()


def ceiling_label(path: DataPath, ctx: Context, kind: Literal["iops", "mibps"]) -> str:
    """Describe the binding ceiling, e.g. "instance m5.4xlarge EBS limit" or "data volume gp3 3,000 IOPS"."""
    binding = path.iops_binding if kind == "iops" else path.mibps_binding
    if binding == "instance":
        return f"instance {ctx.instance(path.instance_id).type} EBS limit"
    vols = [ctx.volume(v) for v in path.volume_ids]
    return f"data volume{'s' if len(vols) > 1 else ''} ({', '.join(sorted({v.type for v in vols}))})"


# ----------------------------------------------------------------------------------------------------
# Evidence helpers


def evidence(
    ctx: Context,
    condition: str,
    measures: list[Measure],
    series: list[SeriesRef],
    *,
    share: float | None = None,
    longest_run_minutes: float | None = None,
    episodes: int | None = None,
    threshold_pct: float | None = None,
    corroboration: list[str] | None = None,
) -> Evidence:
    """Return an Evidence over the context's window."""
    return window_evidence(
        ctx,
        condition=condition,
        measures=measures,
        threshold_pct=threshold_pct,
        share_of_window=share,
        longest_run_minutes=longest_run_minutes,
        episodes=episodes,
        corroboration=corroboration or [],
        series=series,
    )


def utilisation_p95(what: str, value: float, *, limit_label: str | None = None) -> Measure:
    """Return the p95 utilisation of a ceiling as a Measure against the "at the ceiling" band (docs/reference/ebs-volume-types.md#performance-consistency)."""
    return Measure(
        label=f"{what} utilisation p95",
        value=finite(value),
        unit="ratio",
        limit=AT_CEILING_FRACTION,
        limit_label=limit_label,
        statistic="p95",
        source=refs.EBS_VOLUME_TYPES.cite(),
    )


def finite(x: float, default: float = 0.0) -> float:
    """Return x, or `default` when it is NaN or infinite (Measure values must be JSON numbers)."""
    return x if math.isfinite(x) else default


def correlation(a: Array, b: Array) -> float:
    """Return the Pearson correlation of two series over the points where both are finite (NaN if flat)."""
    ok = np.isfinite(a) & np.isfinite(b)
    if int(np.count_nonzero(ok)) < 3:
        return float("nan")
    x, y = a[ok], b[ok]
    if float(np.std(x)) == 0.0 or float(np.std(y)) == 0.0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])
