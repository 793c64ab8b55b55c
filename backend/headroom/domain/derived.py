"""Derived series, vectorised over whole numpy arrays: counted IOPS, rates, average I/O size, latency, hit
ratios, utilisation. The one place these formulas are applied to series: the advisor's context, the snapshot
views, the simulator and the metrics panels all call this module.

Every function takes arrays (or scalars) and returns float64 arrays; NaN is a gap and propagates. A formula
whose denominator is zero returns NaN there ("no reads" has no hit ratio, no latency, no average size).

Sources:
- Counted IOPS: EBS counts an SSD I/O in 256 KiB chunks and an HDD I/O in 1,024 KiB chunks (docs/reference/ebs-io-accounting.md#io-size-cap,
  AWS "Amazon EBS I/O characteristics and monitoring"); `headroom.domain.physics.io.chunks_per_io` / `counted_ops` are the scalar
  definitions (tested against the cited numbers) and these functions compute the same per element. CloudWatch
  gives only sums per period, so every I/O of a period is assumed to have the period's average size.
- Rates: CloudWatch `Sum` per period / period seconds (docs/reference/cloudwatch.md#volume-metrics, docs/reference/cloudwatch.md#instance-ebs-metrics).
- Latency: Sum(VolumeTotalReadTime) / Sum(VolumeReadOps) x 1000 ms (docs/reference/cloudwatch.md#volume-metrics).
- Block-cache hit ratio: hit / (hit + miss) of TiKV's block-cache counters.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from headroom.domain.catalog import CatalogError, volume_type_spec
from headroom.domain.physics.io import HDD_CHUNK_KIB, SSD_CHUNK_KIB
from headroom.domain.units import KIB, MIB

Array = NDArray[np.float64]

BYTES_PER_KIB = float(KIB)
BYTES_PER_MIB = float(MIB)

__all__ = [
    "IoView",
    "avg_io_kib",
    "chunks_per_io",
    "counted_iops",
    "counted_ops",
    "hit_ratio",
    "io_chunk_kib",
    "io_view",
    "latency_ms",
    "mib_per_second",
    "per_second",
    "utilisation",
]


def _f64(x: ArrayLike) -> Array:
    return np.asarray(x, dtype=np.float64)


def io_chunk_kib(volume_type: str) -> int:
    """Return the I/O accounting chunk of a volume type: 1,024 KiB on HDD (st1, sc1), else 256 KiB (docs/reference/ebs-io-accounting.md#io-size-cap).

    Types the catalog does not describe (e.g. previous-generation `standard`) are counted like SSD.
    """
    try:
        return HDD_CHUNK_KIB if volume_type_spec(volume_type).media == "hdd" else SSD_CHUNK_KIB
    except CatalogError:
        return SSD_CHUNK_KIB


def chunks_per_io(io_size_kib: ArrayLike, chunk_kib: int = SSD_CHUNK_KIB) -> Array:
    """Return how many IOPS one I/O of each size counts as: ceil(size / chunk), at least 1 (NaN stays NaN)."""
    if chunk_kib <= 0:
        raise ValueError("chunk_kib must be positive")
    size = _f64(io_size_kib)
    # Round before ceil, as physics.io.chunks_per_io does, so 256.0000001 KiB from float division counts once.
    with np.errstate(invalid="ignore"):
        chunks: Array = np.where(size > 0, np.maximum(1.0, np.ceil(np.round(size / chunk_kib, 9))), 1.0)
    return np.where(np.isnan(size), np.nan, chunks)


def counted_ops(ops: ArrayLike, total_bytes: ArrayLike, chunk_kib: int = SSD_CHUNK_KIB) -> Array:
    """Return the ops EBS counts per element: ops x chunks_per_io(average size); 0 without ops.

    NaN where ops is unknown or negative, or where bytes are unknown or negative while there were ops.
    """
    if chunk_kib <= 0:
        raise ValueError("chunk_kib must be positive")
    o, b = np.broadcast_arrays(_f64(ops), _f64(total_bytes))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        # The same operations as physics.io: bytes / ops -> KiB -> chunks, rounded before ceil, at least 1.
        chunks = np.ceil(np.round(b / o / BYTES_PER_KIB / chunk_kib, 9))
        np.maximum(chunks, 1.0, out=chunks)  # NaN (unknown bytes) stays NaN
        counted: Array = o * chunks
    counted[o == 0] = 0.0
    negative = (o < 0) | (b < 0)
    if negative.any():
        counted[(o < 0) | ((b < 0) & (o > 0))] = np.nan
    return counted


def counted_iops(
    read_ops: ArrayLike,
    write_ops: ArrayLike,
    read_bytes: ArrayLike,
    write_bytes: ArrayLike,
    chunk_kib: int,
    step_seconds: float,
) -> Array:
    """Return reads + writes per second in EBS chunk units (what a volume's IOPS limit sees) from sums per step."""
    out: Array = (
        counted_ops(read_ops, read_bytes, chunk_kib) + counted_ops(write_ops, write_bytes, chunk_kib)
    ) / (float(step_seconds))
    return out


def per_second(sums: ArrayLike, step_seconds: float) -> Array:
    """Return a CloudWatch Sum per step as a per-second rate."""
    out: Array = _f64(sums) / float(step_seconds)
    return out


def mib_per_second(byte_sums: ArrayLike, step_seconds: float) -> Array:
    """Return bytes per step as MiB/s."""
    out: Array = _f64(byte_sums) / float(step_seconds) / BYTES_PER_MIB
    return out


def avg_io_kib(ops: ArrayLike, total_bytes: ArrayLike) -> Array:
    """Return the average I/O size in KiB (NaN without ops)."""
    o, b = _f64(ops), _f64(total_bytes)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: Array = np.where(o > 0, b / o / BYTES_PER_KIB, np.nan)
    return out


def latency_ms(total_time_seconds: ArrayLike, ops: ArrayLike) -> Array:
    """Return the average latency per I/O in ms: Sum(TotalTime) / Sum(Ops) x 1000 (NaN without ops; docs/reference/cloudwatch.md#volume-metrics)."""
    t, o = _f64(total_time_seconds), _f64(ops)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: Array = np.where(o > 0, t / o * 1000.0, np.nan)
    return out


def hit_ratio(hits: ArrayLike, misses: ArrayLike) -> Array:
    """Return hits / (hits + misses) in [0, 1] (NaN without lookups)."""
    h, m = _f64(hits), _f64(misses)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: Array = np.where(h + m > 0, h / (h + m), np.nan)
    return out


def utilisation(values: ArrayLike, limits: ArrayLike) -> Array:
    """Return values / limits per element (NaN where the limit is not positive)."""
    v, lim = _f64(values), _f64(limits)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: Array = np.asarray(np.divide(v, lim), dtype=np.float64)
    if out.shape != v.shape:
        out = np.array(np.broadcast_to(out, v.shape), dtype=np.float64)
    bad = ~(lim > 0)
    if bad.any():
        out[np.broadcast_to(bad, v.shape)] = np.nan
    return out


class IoView:
    """Per-step rates of one volume or instance, derived from CloudWatch sums when first read."""

    def __init__(
        self,
        *,
        start: datetime,
        step_seconds: int,
        chunk_kib: int,
        read_ops: Array,
        write_ops: Array,
        read_bytes: Array,
        write_bytes: Array,
        read_time: Array | None = None,
        write_time: Array | None = None,
        queue_length: Array | None = None,
    ) -> None:
        self.start = start
        self.step_seconds = step_seconds
        self.chunk_kib = chunk_kib
        self._sums = (read_ops, write_ops, read_bytes, write_bytes)
        self._volume = (read_time, write_time, queue_length)

    def _missing(self) -> Array:
        return np.full(len(self._sums[0]), np.nan)

    @property
    def timestamps(self) -> list[datetime]:
        """Return the timestamp of every step."""
        step = timedelta(seconds=self.step_seconds)
        return [self.start + i * step for i in range(len(self._sums[0]))]

    @cached_property
    def read_iops(self) -> Array:
        """Return reads per second as issued."""
        return per_second(self._sums[0], self.step_seconds)

    @cached_property
    def write_iops(self) -> Array:
        """Return writes per second as issued."""
        return per_second(self._sums[1], self.step_seconds)

    @cached_property
    def counted_iops(self) -> Array:
        """Return reads + writes per second in EBS chunk units (what the IOPS limit sees)."""
        ro, wo, rb, wb = self._sums
        return counted_iops(ro, wo, rb, wb, self.chunk_kib, self.step_seconds)

    @cached_property
    def read_mibps(self) -> Array:
        """Return read MiB/s."""
        return mib_per_second(self._sums[2], self.step_seconds)

    @cached_property
    def write_mibps(self) -> Array:
        """Return write MiB/s."""
        return mib_per_second(self._sums[3], self.step_seconds)

    @cached_property
    def avg_read_kib(self) -> Array:
        """Return the average read size in KiB (NaN without reads)."""
        return avg_io_kib(self._sums[0], self._sums[2])

    @cached_property
    def avg_write_kib(self) -> Array:
        """Return the average write size in KiB (NaN without writes)."""
        return avg_io_kib(self._sums[1], self._sums[3])

    @cached_property
    def read_latency_ms(self) -> Array:
        """Return the average read latency in ms (NaN for instances: CloudWatch has no per-instance latency)."""
        t = self._volume[0]
        return self._missing() if t is None else latency_ms(t, self._sums[0])

    @cached_property
    def write_latency_ms(self) -> Array:
        """Return the average write latency in ms (NaN for instances)."""
        t = self._volume[1]
        return self._missing() if t is None else latency_ms(t, self._sums[1])

    @cached_property
    def queue_length(self) -> Array:
        """Return the volume's average queue length (NaN for instances)."""
        q = self._volume[2]
        return self._missing() if q is None else _f64(q)

    @property
    def iops(self) -> Array:
        """Return read + write IOPS as issued."""
        out: Array = self.read_iops + self.write_iops
        return out

    @cached_property
    def mibps(self) -> Array:
        """Return read + write MiB/s."""
        out: Array = self.read_mibps + self.write_mibps
        return out


def io_view(
    *,
    start: datetime,
    step_seconds: int,
    chunk_kib: int,
    read_ops: Array,
    write_ops: Array,
    read_bytes: Array,
    write_bytes: Array,
    read_time: Array | None = None,
    write_time: Array | None = None,
    queue_length: Array | None = None,
) -> IoView:
    """Return the I/O view of sums per step (ops, bytes, and for volumes total time and queue length)."""
    return IoView(
        start=start,
        step_seconds=step_seconds,
        chunk_kib=chunk_kib,
        read_ops=read_ops,
        write_ops=write_ops,
        read_bytes=read_bytes,
        write_bytes=write_bytes,
        read_time=read_time,
        write_time=write_time,
        queue_length=queue_length,
    )
