"""I/O accounting: the 256 KiB / 1,024 KiB chunk, counted IOPS, average I/O size, and which limit binds first.

Source: docs/reference/ebs-io-accounting.md#io-size-cap (AWS, "Amazon EBS I/O characteristics and monitoring"): "I/O size is capped at 256 KiB for SSD volumes
and 1,024 KiB for HDD volumes"; larger I/Os are split (a 1 MiB SSD I/O counts as 4), small physically
sequential I/Os are merged up to the cap.

Choice, documented: CloudWatch gives only sums (ops and bytes per period, docs/reference/cloudwatch.md#volume-metrics), so the size distribution is
unknown. We assume every I/O in the period has the average size: counted ops = ops × ceil(avg / chunk).
Merging of small sequential I/Os cannot be seen from these sums and is ignored, so for small sequential I/O
the counted IOPS are an upper bound (conservative: we never under-count against the IOPS limit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from headroom.domain.catalog.volume_types import HDD_IO_CHUNK_KIB, SSD_IO_CHUNK_KIB
from headroom.domain.units import (
    KIB_PER_MIB,
    bytes_to_kib,
    bytes_to_mib,
    mb_to_mib,
    mbps_to_mb_per_s,
    mib_to_mb,
)

if TYPE_CHECKING:
    from headroom.domain.catalog.volume_types import VolumeLimits

__all__ = [
    "SSD_CHUNK_KIB",
    "HDD_CHUNK_KIB",
    "BindingLimit",
    "IoProfile",
    "binding_limit",
    "chunks_per_io",
    "counted_ops",
    "io_profile",
    "mb_to_mib",
    "mbps_to_mb_per_s",
    "mib_to_mb",
    "volume_binding_limit",
]

# One definition, the catalog's: 256 KiB on SSD, 1,024 KiB on HDD (docs/reference/ebs-io-accounting.md#io-size-cap).
SSD_CHUNK_KIB = SSD_IO_CHUNK_KIB
HDD_CHUNK_KIB = HDD_IO_CHUNK_KIB

Binds = Literal["iops", "throughput", "both"]


def chunks_per_io(io_size_kib: float, chunk_kib: int = SSD_CHUNK_KIB) -> int:
    """Return how many IOPS one I/O of this size counts as: ceil(size / chunk), at least 1 (docs/reference/ebs-io-accounting.md#io-size-cap)."""
    if chunk_kib <= 0:
        raise ValueError("chunk_kib must be positive")
    if io_size_kib <= 0:
        return 1
    # Round before ceil so 256.0000001 KiB from float division does not count as 2 chunks.
    return max(1, math.ceil(round(io_size_kib / chunk_kib, 9)))


def counted_ops(ops: float, total_bytes: float, chunk_kib: int = SSD_CHUNK_KIB) -> float:
    """Return the ops EBS counts for `ops` I/Os moving `total_bytes`, assuming each has the average size."""
    if ops < 0 or total_bytes < 0:
        raise ValueError("ops and total_bytes must be non-negative")
    if ops == 0:
        return 0.0
    return ops * chunks_per_io(bytes_to_kib(total_bytes / ops), chunk_kib)


@dataclass(frozen=True)
class IoProfile:
    """Rates observed over one period (from CloudWatch Sum statistics)."""

    period_seconds: float
    chunk_kib: int
    observed_iops: float  # ops / period, as the instance issued them
    counted_iops: float  # in chunk units, what the volume's IOPS limit sees
    avg_io_kib: float | None  # None when there was no I/O
    throughput_mibps: float


def io_profile(
    ops: float, total_bytes: float, period_seconds: float, chunk_kib: int = SSD_CHUNK_KIB
) -> IoProfile:
    """Return observed and counted IOPS, average I/O size and MiB/s from op and byte sums over a period."""
    if period_seconds <= 0:
        raise ValueError("period_seconds must be positive")
    return IoProfile(
        period_seconds=period_seconds,
        chunk_kib=chunk_kib,
        observed_iops=ops / period_seconds,
        counted_iops=counted_ops(ops, total_bytes, chunk_kib) / period_seconds,
        avg_io_kib=bytes_to_kib(total_bytes / ops) if ops > 0 else None,
        throughput_mibps=bytes_to_mib(total_bytes) / period_seconds,
    )


@dataclass(frozen=True)
class BindingLimit:
    """What a volume (or node) can do at one average I/O size, and which limit stops it first."""

    io_size_kib: float
    binds: Binds
    max_ios_per_second: float  # I/Os of this size per second
    max_counted_iops: float  # the same in chunk units
    max_throughput_mibps: float  # achievable MiB/s at this size
    crossover_io_kib: float | None  # I/O size above which throughput binds (None: IOPS binds at every size)


def binding_limit(
    io_size_kib: float, iops_limit: float, throughput_limit_mibps: float, chunk_kib: int = SSD_CHUNK_KIB
) -> BindingLimit:
    """Return which of an IOPS limit and a MiB/s limit binds first for I/Os of a given average size (docs/reference/ebs-io-accounting.md#io-size-cap)."""
    if io_size_kib <= 0:
        raise ValueError("io_size_kib must be positive")
    chunks = chunks_per_io(io_size_kib, chunk_kib)
    by_iops = iops_limit / chunks
    by_throughput = throughput_limit_mibps * KIB_PER_MIB / io_size_kib
    if math.isclose(by_iops, by_throughput, rel_tol=1e-9):
        binds: Binds = "both"
    else:
        binds = "iops" if by_iops < by_throughput else "throughput"
    ios = min(by_iops, by_throughput)
    # Up to one chunk every I/O counts once, so the crossover is where iops × size = throughput.
    crossover = throughput_limit_mibps * KIB_PER_MIB / iops_limit if iops_limit > 0 else None
    if crossover is not None and crossover > chunk_kib:
        crossover = None  # past one chunk each counted op carries ≤ chunk KiB: IOPS keeps binding
    return BindingLimit(
        io_size_kib=io_size_kib,
        binds=binds,
        max_ios_per_second=ios,
        max_counted_iops=ios * chunks,
        max_throughput_mibps=ios * io_size_kib / KIB_PER_MIB,
        crossover_io_kib=crossover,
    )


def volume_binding_limit(limits: VolumeLimits, io_size_kib: float, *, burst: bool = False) -> BindingLimit:
    """Return one volume's binding limit at an I/O size, sustained or (burst=True) with credits."""
    iops = limits.max_iops if burst else limits.baseline_iops
    mibps = limits.max_throughput_mibps if burst else limits.baseline_throughput_mibps
    return binding_limit(io_size_kib, iops, mibps, limits.io_chunk_kib)
