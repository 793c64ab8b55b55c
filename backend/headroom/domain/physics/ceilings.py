"""Effective EBS ceilings of a node: the smaller of its volumes' limits and its instance's EBS limits.

docs/reference/ec2-ebs-limits.md#limits-table notes (EC2TYPES "Important" box): "An instance's EBS performance is bounded by the instance
limit or the sum of its attached volumes, whichever is smaller." Volumes add up; a RAID 0 stripe of N
volumes delivers N × the slowest member (every stripe touches each member equally), which equals the sum
when members are identical. Instance throughput is converted from MB/s to MiB/s (docs/reference/ec2-ebs-limits.md#units) before comparing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from headroom.domain.catalog.instance_types import InstanceLimits
from headroom.domain.catalog.volume_types import VolumeLimits

Component = Literal["volumes", "instance", "both"]


@dataclass(frozen=True)
class Ceiling:
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
    sustained_iops: Ceiling
    burst_iops: Ceiling
    sustained_throughput_mibps: Ceiling
    burst_throughput_mibps: Ceiling

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return asdict(self)


def _ceiling(volumes: float, instance: float) -> Ceiling:
    if abs(volumes - instance) <= 1e-9 * max(volumes, instance, 1.0):
        binding: Component = "both"
    else:
        binding = "volumes" if volumes < instance else "instance"
    return Ceiling(volumes=volumes, instance=instance, effective=min(volumes, instance), binding=binding)


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
