"""Effective EBS ceilings of a node: the smaller of its volumes' limits and its instance's EBS limits.

docs/reference/ec2-ebs-limits.md#limits-table notes (the "Important" note of AWS's "Amazon EBS-optimized instance types"): "An instance's EBS performance is bounded by the instance
limit or the sum of its attached volumes, whichever is smaller." Volumes add up; a RAID 0 stripe of N
volumes delivers N × the slowest member (every stripe touches each member equally), which equals the sum
when members are identical. Instance throughput is converted from MB/s to MiB/s (docs/reference/ec2-ebs-limits.md#units) before comparing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from headroom.domain import references
from headroom.domain.catalog.instance_types import InstanceLimits
from headroom.domain.catalog.volume_types import PROVISIONED_IOPS_TYPES, PROVISIONED_THROUGHPUT_TYPES, VolumeLimits
from headroom.domain.model import Ceiling

if TYPE_CHECKING:
    from headroom.domain.catalog.resolve import ResolvedInstanceLimits

Array = NDArray[np.float64]
IoDimension = Literal["iops", "throughput"]

Component = Literal["volumes", "instance", "both"]


@dataclass(frozen=True)
class EffectiveCeiling:
    """One ceiling (IOPS or MiB/s): what the volumes allow, what the instance allows, the effective one."""

    volumes: float
    instance: float
    effective: float
    binding: Component


@dataclass(frozen=True)
class NodeCeilings:
    """Sustained and burst ceilings of a node in IOPS and MiB/s, each naming the component that binds."""

    instance_type: str
    volume_count: int
    raid0: bool
    sustained_iops: EffectiveCeiling
    burst_iops: EffectiveCeiling
    sustained_throughput_mibps: EffectiveCeiling
    burst_throughput_mibps: EffectiveCeiling

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return asdict(self)


def _ceiling(volumes: float, instance: float) -> EffectiveCeiling:
    if abs(volumes - instance) <= 1e-9 * max(volumes, instance, 1.0):
        binding: Component = "both"
    else:
        binding = "volumes" if volumes < instance else "instance"
    return EffectiveCeiling(volumes=volumes, instance=instance, effective=min(volumes, instance), binding=binding)


def _combine(values: Sequence[float], raid0: bool) -> float:
    if not values:
        return 0.0
    return len(values) * min(values) if raid0 else sum(values)


def node_ceilings(
    instance: InstanceLimits, volumes: Sequence[VolumeLimits], *, raid0: bool = False
) -> NodeCeilings:
    """Return the node's effective IOPS and MiB/s ceilings, sustained and burst, and what binds each."""
    base_iops = [v.baseline_iops for v in volumes]
    burst_iops = [v.max_iops for v in volumes]
    base_tput = [v.baseline_throughput_mibps for v in volumes]
    burst_tput = [v.max_throughput_mibps for v in volumes]
    return NodeCeilings(
        instance_type=instance.name,
        volume_count=len(volumes),
        raid0=raid0,
        sustained_iops=_ceiling(_combine(base_iops, raid0), instance.baseline_iops),
        burst_iops=_ceiling(_combine(burst_iops, raid0), instance.max_iops),
        sustained_throughput_mibps=_ceiling(_combine(base_tput, raid0), instance.baseline_throughput_mibps),
        burst_throughput_mibps=_ceiling(_combine(burst_tput, raid0), instance.max_throughput_mibps),
    )


# --- the ceiling in force ------------------------------------------------------------------------------------


def in_force(burst: float | Array | None, sustained: float | Array, balance: Array | None, n: int) -> Array:
    """Return the ceiling in force at each of `n` points: `burst` while the credit balance has credits, else
    `sustained` (each a number, or one value per point when the limits changed inside the window; a NaN burst
    means no burst ceiling at that point).

    A point whose balance is above 0 % had credits through its step (CloudWatch's BurstBalance and EC2's
    EBSIOBalance% / EBSByteBalance% are read with the Minimum statistic: docs/reference/cloudwatch.md). A point
    without a balance sample, and a volume or instance with no balance series at all, counts as having credits:
    the higher ceiling, so a missing datapoint never raises a false alarm. This is the one rule: the advisor, the
    charts' "ceiling in force" line and the glance table all call it.
    """
    low = np.broadcast_to(np.asarray(sustained, dtype=np.float64), (n,))
    if burst is None:
        return np.array(low, dtype=np.float64)
    high = np.broadcast_to(np.asarray(burst, dtype=np.float64), (n,))
    with np.errstate(invalid="ignore"):
        use_burst = high > low  # NaN (no burst ceiling) compares False
        if balance is not None and len(balance) == n:
            use_burst = use_burst & ~(np.asarray(balance, dtype=np.float64) <= 0.0)  # NaN (no sample): credits
    return np.where(use_burst, high, low).astype(np.float64)


def volume_in_force(limits: VolumeLimits, dimension: IoDimension, balance: Array | None, n: int) -> Array:
    """Return a volume's IOPS or MiB/s ceiling per point: gp2's burst IOPS, or gp2 (170-334 GiB) / st1 / sc1 burst
    throughput, while its BurstBalance has credits; its baseline (or provisioned figure) otherwise."""
    if dimension == "iops":
        return in_force(limits.burst_iops, limits.baseline_iops, balance, n)
    if limits.burst_throughput_mibps is None:
        return np.full(n, float(limits.max_throughput_mibps))
    return in_force(limits.burst_throughput_mibps, limits.baseline_throughput_mibps, balance, n)


def instance_in_force(limits: InstanceLimits, dimension: IoDimension, balance: Array | None, n: int) -> Array:
    """Return an instance's EBS IOPS or MiB/s ceiling per point: its maximum while EBSIOBalance% (IOPS) or
    EBSByteBalance% (MiB/s) has credits, its baseline otherwise (docs/reference/ec2-ebs-limits.md)."""
    if dimension == "iops":
        return in_force(limits.max_iops, limits.baseline_iops, balance, n)
    return in_force(limits.max_throughput_mibps, limits.baseline_throughput_mibps, balance, n)


# --- the ceilings of a chart, as the one Ceiling shape ---------------------------------------------------------


def volume_ceilings(
    limits: VolumeLimits, role: str, valid_from: datetime | None = None, valid_to: datetime | None = None
) -> dict[IoDimension, list[Ceiling]]:
    """Return a volume's IOPS and MiB/s ceilings, ids prefixed by its role ("data", "raft"): the sustained or
    provisioned one always, the burst one when the volume bursts."""
    vtype = limits.volume_type
    source = f"{vtype} {int(limits.size_gib)} GiB: {limits.source}"
    provisioned_iops = limits.provisioned_iops is not None or vtype in PROVISIONED_IOPS_TYPES
    iops: list[Ceiling] = []
    if limits.burst_iops is not None and limits.burst_iops > limits.baseline_iops:
        iops.append(Ceiling(id=f"{role}_baseline_iops", label=f"{vtype} baseline IOPS", value=float(limits.baseline_iops),
                            unit="IOPS", kind="sustained", valid_from=valid_from, valid_to=valid_to, source=source))
        iops.append(Ceiling(id=f"{role}_max_iops", label=f"{vtype} burst IOPS", value=float(limits.burst_iops),
                            unit="IOPS", kind="burst", valid_from=valid_from, valid_to=valid_to, source=source))
    else:
        label = f"{vtype} provisioned IOPS" if limits.provisioned_iops is not None else f"{vtype} IOPS"
        iops.append(Ceiling(id=f"{role}_max_iops", label=label, value=float(limits.baseline_iops), unit="IOPS",
                            kind="provisioned" if provisioned_iops else "sustained", valid_from=valid_from,
                            valid_to=valid_to, source=source))
    base_t, max_t = float(limits.baseline_throughput_mibps), float(limits.max_throughput_mibps)
    provisioned_t = limits.provisioned_throughput_mibps is not None or vtype in PROVISIONED_THROUGHPUT_TYPES
    t_label = f"{vtype} provisioned throughput" if limits.provisioned_throughput_mibps else f"{vtype} throughput"
    tput: list[Ceiling] = []
    if max_t > base_t:
        tput.append(Ceiling(id=f"{role}_baseline_mibps", label=f"{t_label} (baseline)", value=base_t, unit="MiB/s",
                            kind="sustained", valid_from=valid_from, valid_to=valid_to, source=source))
        tput.append(Ceiling(id=f"{role}_max_mibps", label=f"{vtype} burst throughput", value=max_t, unit="MiB/s",
                            kind="burst", valid_from=valid_from, valid_to=valid_to, source=source))
    else:
        tput.append(Ceiling(id=f"{role}_max_mibps", label=t_label, value=max_t, unit="MiB/s",
                            kind="provisioned" if provisioned_t else "sustained", valid_from=valid_from,
                            valid_to=valid_to, source=source))
    return {"iops": iops, "throughput": tput}


def sustained(ceilings: Sequence[Ceiling]) -> Ceiling:
    """The ceiling a volume or instance holds indefinitely: its sustained or provisioned one (what a growth
    projection runs into and what an alert without credit balances holds it to)."""
    return next(c for c in ceilings if c.kind != "burst")


HEADROOM_DIGITS = 2  # kept to 0.01 points: every surface then formats the same figure (units.format_quantity)


def observed_p99(values: Array) -> float:
    """Return the p99 a headroom is taken of: the 99th percentile of the window's samples (a NaN, no sample, is left
    out), 0 without any. Every headroom figure takes this one statistic (docs/thresholds/burst.md#headroom)."""
    finite = values[~np.isnan(values)]
    return float(np.percentile(finite, 99)) if finite.size else 0.0


def headroom_pct(p99: float, limit: float, *also_binding: float | None) -> float | None:
    """Return the headroom of a p99 under the limit its I/O meets first, 100 × (1 − p99 / limit), rounded once.

    `also_binding`: other limits the same I/O passes through (a volume's instance's own EBS limit: the node gets
    the smaller, docs/reference/ec2-ebs-limits.md#limits-table); the smallest positive one counts. None without a
    positive limit. Findings, the what-if and the apply plan all take this one figure."""
    limits = [v for v in (limit, *also_binding) if v is not None and v > 0]
    if not limits:
        return None
    return round(100.0 * (1.0 - p99 / min(limits)), HEADROOM_DIGITS) + 0.0  # + 0.0: never -0.0


def attached_volumes_ceiling(
    volumes: Sequence[VolumeLimits], dimension: IoDimension, *, raid0: bool = False
) -> Ceiling | None:
    """The sustained ceiling of an instance's attached volumes together (the other half of "the instance limit or
    the sum of its attached volumes, whichever is smaller", docs/reference/ec2-ebs-limits.md#limits-table): the sum
    of each volume's sustained or provisioned ceiling, or N x the slowest for a RAID 0 stripe of N. It is
    `provisioned` when every volume's is. None without volumes."""
    own = [sustained(volume_ceilings(v, "volume")[dimension]) for v in volumes]
    if not own:
        return None
    word = "IOPS" if dimension == "iops" else "throughput"
    how = f"RAID 0 of {len(own)} volumes" if raid0 else f"sum of {len(own)} volume{'s' if len(own) > 1 else ''}"
    sources = "; ".join(dict.fromkeys(c.source for c in own))
    return Ceiling(
        id=f"volumes_sum_{dimension}", label=f"attached volumes' sustained {word} ({how})",
        value=_combine([c.value for c in own], raid0), unit=own[0].unit,
        kind="provisioned" if all(c.kind == "provisioned" for c in own) else "sustained",
        source=f"{references.EBS_OPTIMIZED.cite()}; {sources}",
    )


def at_value(ceilings: Sequence[Ceiling], value: float) -> Ceiling | None:
    """The ceiling of one volume or instance that `in_force` held a comparison to: the one whose value is `value`
    (in_force returns one of these exact numbers; the non-burst one when both are equal), None when none is."""
    return next((c for c in sorted(ceilings, key=lambda c: c.kind == "burst")
                 if math.isclose(c.value, value, rel_tol=1e-9)), None)


INSTANCE_SOURCE = references.EBS_OPTIMIZED.cite()


def instance_ceilings(
    resolved: ResolvedInstanceLimits, valid_from: datetime | None = None, valid_to: datetime | None = None
) -> dict[IoDimension, list[Ceiling]]:
    """Return an instance's EBS IOPS and MiB/s ceilings (all its volumes together): the baseline, and the
    30-minute maximum when the type bursts. An unknown type has none."""
    out: dict[IoDimension, list[Ceiling]] = {"iops": [], "throughput": []}
    lim = resolved.limits
    if lim is None:
        return out
    itype = resolved.instance_type
    source = f"{itype}: {INSTANCE_SOURCE}" if resolved.origin == "catalog" else f"{itype}: {resolved.note}"
    pairs: tuple[tuple[IoDimension, float, float, str], ...] = (
        ("iops", lim.baseline_iops, lim.max_iops, "IOPS"),
        ("throughput", lim.baseline_throughput_mibps, lim.max_throughput_mibps, "MiB/s"),
    )
    for dimension, base, mx, unit in pairs:
        word = "IOPS" if dimension == "iops" else "throughput"
        if float(mx) > float(base):
            out[dimension].append(Ceiling(
                id=f"instance_baseline_{dimension}", label=f"{itype} EBS baseline {word}", value=float(base),
                unit=unit, kind="sustained", valid_from=valid_from, valid_to=valid_to, source=source))
            out[dimension].append(Ceiling(
                id=f"instance_max_{dimension}", label=f"{itype} EBS burst {word} (30 min/24 h)", value=float(mx),
                unit=unit, kind="burst", valid_from=valid_from, valid_to=valid_to, source=source))
        else:
            out[dimension].append(Ceiling(
                id=f"instance_max_{dimension}", label=f"{itype} EBS {word}", value=float(mx), unit=unit,
                kind="sustained", valid_from=valid_from, valid_to=valid_to, source=source))
    return out


def merge_segments(segments: Iterable[Ceiling]) -> list[Ceiling]:
    """Join consecutive pieces of one ceiling id whose value, kind and label did not change."""
    out: list[Ceiling] = []
    for seg in sorted(segments, key=lambda s: (s.id, s.valid_from or datetime.min.replace(tzinfo=UTC))):
        last = out[-1] if out else None
        if last and last.id == seg.id and last.value == seg.value and last.label == seg.label \
                and last.kind == seg.kind and last.valid_to == seg.valid_from:
            out[-1] = last.model_copy(update={"valid_to": seg.valid_to})
        else:
            out.append(seg)
    return out
