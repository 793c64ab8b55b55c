"""The one rule for which EBS limits an instance or volume is judged against (pure: data in, data out).

Instance types: Headroom's catalog first (built-in data, docs/reference/ec2-ebs-limits.md#limits-table, plus the refresh override), then the
account's own DescribeInstanceTypes answer (EbsInfo, docs/reference/ec2-ebs-limits.md#describeinstancetypes) when the catalog lacks the type, else
"unknown" with a note that says so and why nothing judges that instance's EBS limits. Volumes: the catalog's
volume limits with the volume's provisioned IOPS (gp3, io1, io2) and throughput (gp3); DescribeVolumes also
reports gp2/st1/sc1 `Iops`, which are not provisioned and are left out (docs/reference/ebs-volume-types.md#limits-per-volume-type, docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025, docs/reference/gp2-burst.md#st1-and-sc1-throughput-credits).

Every reader of limits (the snapshot builder and through it the advisor, the nodes API, the metrics charts'
reference lines and the weekly email) goes through these functions, so a chart never shows a ceiling the
advisor did not judge against. The database side (the stored DescribeInstanceTypes rows) is
headroom.inventory.limits.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from headroom.domain.catalog.errors import CatalogError
from headroom.domain.catalog.instance_types import (
    InstanceCatalog,
    InstanceLimits,
    instance_limits_from_entry,
    load_catalog,
)
from headroom.domain.catalog.volume_types import (
    PROVISIONED_IOPS_TYPES,
    PROVISIONED_THROUGHPUT_TYPES,
    VolumeLimits,
    volume_limits,
)

LimitsOrigin = Literal["catalog", "describe_instance_types", "unknown"]


@dataclass(frozen=True)
class DescribedType:
    """An instance type's EbsInfo as the account's DescribeInstanceTypes returned it (docs/reference/ec2-ebs-limits.md#describeinstancetypes).

    `entry` has the catalog entry's shape (baseline/max bandwidth in Mbps, baseline/max IOPS, vCPUs, memory);
    `source` says where and when it was observed.
    """

    entry: Mapping[str, Any]
    source: str


def described_source(region: str | None, observed_at: dt.datetime | None) -> str:
    """Return the source note of a stored DescribeInstanceTypes answer: region and day observed."""
    parts = [p for p in (region, f"observed {observed_at:%Y-%m-%d}" if observed_at else None) if p]
    return "DescribeInstanceTypes EbsInfo" + (f" ({', '.join(parts)})" if parts else "")


def unknown_type_note(instance_type: str) -> str:
    """Return the note shown where an instance type's EBS limits are unknown."""
    return (
        f"{instance_type}: EBS limits unknown. The type is neither in Headroom's catalog (AWS 'Amazon EBS-optimized "
        "instances') nor in this account's DescribeInstanceTypes answer (EbsInfo), so no finding judges this instance's EBS "
        "bandwidth or IOPS. The AWS source's next inventory sync describes new types; "
        "`headroom catalog refresh-instances` adds them to the catalog."
    )


@dataclass(frozen=True)
class ResolvedInstanceLimits:
    """The EBS limits an instance type is judged against, where they come from, and a note for people."""

    instance_type: str
    limits: InstanceLimits | None
    origin: LimitsOrigin
    note: str

    @property
    def known(self) -> bool:
        return self.limits is not None


def resolve_instance_limits(
    instance_type: str, described: DescribedType | None = None, *, catalog: InstanceCatalog | None = None
) -> ResolvedInstanceLimits:
    """Return an instance type's EBS limits: the catalog, else the DescribeInstanceTypes entry, else unknown."""
    try:
        found = (catalog or load_catalog()).get(instance_type)
        return ResolvedInstanceLimits(instance_type, found, "catalog", found.source)
    except CatalogError:
        pass
    if described is not None:
        try:
            entry = {**described.entry, "name": instance_type, "source": None}
            limits = instance_limits_from_entry(entry, described.source)
        except CatalogError:
            limits = None  # a malformed stored answer counts as no answer
        if limits is not None and min(limits.baseline_bandwidth_mbps, limits.baseline_iops) > 0:
            return ResolvedInstanceLimits(instance_type, limits, "describe_instance_types", described.source)
    return ResolvedInstanceLimits(instance_type, None, "unknown", unknown_type_note(instance_type))


@dataclass(frozen=True)
class ResolvedVolumeLimits:
    """The limits a volume is judged against (None for a type the catalog lacks, e.g. magnetic `standard`)."""

    volume_type: str
    limits: VolumeLimits | None
    note: str


def resolve_volume_limits(
    volume_type: str,
    size_gib: float,
    iops: int | None,
    throughput_mibps: float | None,
    *,
    region: str = "us-east-1",
) -> ResolvedVolumeLimits:
    """Return a volume's catalog limits with its provisioned IOPS / throughput (where its type provisions them)."""
    try:
        limits = volume_limits(
            volume_type,
            size_gib,
            iops if volume_type in PROVISIONED_IOPS_TYPES else None,
            throughput_mibps if volume_type in PROVISIONED_THROUGHPUT_TYPES else None,
            region=region,
        )
    except CatalogError as exc:
        return ResolvedVolumeLimits(volume_type, None, f"{volume_type}: limits unknown ({exc})")
    return ResolvedVolumeLimits(volume_type, limits, limits.source)
