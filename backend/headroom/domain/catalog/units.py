"""Unit conversions in one place.

AWS quotes instance EBS throughput in MB/s (decimal, = Mbps / 8) and volume throughput in MiB/s (binary)
(domain.md §2.1: "Throughput is in MB/s = Mbps ÷ 8, decimal"; "EBS volume limits are in MiB/s: 593.75 MB/s ≈
566 MiB/s"). Every conversion between the two goes through this module.
"""

from __future__ import annotations

BYTES_PER_MB = 1_000_000  # SI megabyte
BYTES_PER_MIB = 1024 * 1024  # IEC mebibyte
BYTES_PER_KIB = 1024
KIB_PER_MIB = 1024
GIB_PER_TIB = 1024
BITS_PER_BYTE = 8


def mbps_to_mb_per_s(megabits_per_s: float) -> float:
    """Convert megabits per second (AWS "bandwidth") to decimal megabytes per second (domain.md §2.1)."""
    return megabits_per_s / BITS_PER_BYTE


def mb_to_mib(mb_per_s: float) -> float:
    """Convert decimal MB/s to binary MiB/s."""
    return mb_per_s * BYTES_PER_MB / BYTES_PER_MIB


def mib_to_mb(mib_per_s: float) -> float:
    """Convert binary MiB/s to decimal MB/s."""
    return mib_per_s * BYTES_PER_MIB / BYTES_PER_MB


def bytes_to_mib(n_bytes: float) -> float:
    """Convert a byte count to MiB."""
    return n_bytes / BYTES_PER_MIB


def bytes_to_kib(n_bytes: float) -> float:
    """Convert a byte count to KiB."""
    return n_bytes / BYTES_PER_KIB


def gib_to_tib(gib: float) -> float:
    """Convert GiB to TiB."""
    return gib / GIB_PER_TIB
