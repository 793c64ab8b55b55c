"""I/O accounting. Expected numbers from docs/reference/ebs-io-accounting.md#io-size-cap (AWS "Amazon EBS I/O characteristics and monitoring") and
docs/reference/ebs-io-accounting.md#throughput-before-iops."""

from __future__ import annotations

import pytest
from headroom.domain.catalog import volume_limits
from headroom.domain.physics.io import (
    binding_limit,
    chunks_per_io,
    counted_ops,
    io_profile,
    mb_to_mib,
    mbps_to_mb_per_s,
    volume_binding_limit,
)
from io_cases import CHUNKS_PER_IO_CASES


@pytest.mark.parametrize(("io_kib", "chunk_kib", "chunks"), CHUNKS_PER_IO_CASES)
def test_chunks_per_io(io_kib: float, chunk_kib: int, chunks: int) -> None:
    assert chunks_per_io(io_kib, chunk_kib) == chunks


def test_io_profile_large_ssd_ios() -> None:
    # 60 s of 1 MiB writes at 1,000/s: docs/reference/ebs-io-accounting.md#io-size-cap counts each as 4 IOPS.
    p = io_profile(ops=60_000, total_bytes=60_000 * 1024 * 1024, period_seconds=60, chunk_kib=256)
    assert p.observed_iops == pytest.approx(1000)
    assert p.counted_iops == pytest.approx(4000)
    assert p.avg_io_kib == pytest.approx(1024)
    assert p.throughput_mibps == pytest.approx(1000)


def test_io_profile_average_size_from_sums() -> None:
    # docs/reference/ebs-io-accounting.md#io-size-cap, docs/reference/cloudwatch.md#volume-metrics: average I/O size = Sum(Bytes) / Sum(Ops); 44 KiB average on a 300 s period.
    ops = 300 * 2000
    p = io_profile(ops=ops, total_bytes=ops * 44 * 1024, period_seconds=300)
    assert p.avg_io_kib == pytest.approx(44)
    assert p.observed_iops == pytest.approx(2000)
    assert p.counted_iops == pytest.approx(2000)  # under one chunk: one op each
    assert p.throughput_mibps == pytest.approx(2000 * 44 / 1024)


def test_io_profile_idle_and_bad_period() -> None:
    p = io_profile(0, 0, 60)
    assert (p.observed_iops, p.counted_iops, p.avg_io_kib, p.throughput_mibps) == (0, 0, None, 0)
    with pytest.raises(ValueError):
        io_profile(1, 1, 0)
    assert counted_ops(10, 10 * 512 * 1024, 256) == 20


@pytest.mark.parametrize(
    ("io_kib", "iops", "mibps", "chunk", "binds", "ios", "achieved_mibps"),
    [
        # docs/reference/ebs-io-accounting.md#io-size-cap example: gp2 with credits (3,000 IOPS, 250 MiB/s) at 256 KiB hits 250 MiB/s at 1,000 IOPS.
        (256, 3000, 250, 256, "throughput", 1000, 250),
        # same volume at 16 KiB: IOPS binds at 3,000 × 16 KiB = 46.875 MiB/s.
        (16, 3000, 250, 256, "iops", 3000, 46.875),
        # docs/reference/ebs-io-accounting.md#throughput-before-iops (KloudDB's example): "a volume offer 160 MB/sec that means 640 IOPS (160MB/256KB)".
        (256, 3000, 160, 256, "throughput", 640, 160),
        # gp3 default 3,000 / 125: crossover at 125 × 1024 / 3000 = 42.67 KiB; at 64 KiB throughput binds.
        (64, 3000, 125, 256, "throughput", 2000, 125),
        # 1 MiB I/O on SSD counts 4 (docs/reference/ebs-io-accounting.md#io-size-cap): 3,000 IOPS allow 750 MiB/s of 1 MiB I/O; gp3 1,000 MiB/s at 3,000
        # IOPS would be invalid, so use a 16,000 IOPS / 1,000 MiB/s volume: IOPS allows 4,000/s = 4,000 MiB/s.
        (1024, 16000, 1000, 256, "throughput", 1000, 1000),
        (1024, 3000, 1000, 256, "iops", 750, 750),
    ],
)
def test_binding_limit(
    io_kib: float, iops: float, mibps: float, chunk: int, binds: str, ios: float, achieved_mibps: float
) -> None:
    b = binding_limit(io_kib, iops, mibps, chunk)
    assert b.binds == binds
    assert b.max_ios_per_second == pytest.approx(ios)
    assert b.max_throughput_mibps == pytest.approx(achieved_mibps)


def test_crossover() -> None:
    # 250 MiB/s / 3,000 IOPS = 85.33 KiB per I/O.
    assert binding_limit(16, 3000, 250).crossover_io_kib == pytest.approx(250 * 1024 / 3000)
    assert binding_limit(250 * 1024 / 3000, 3000, 250).binds == "both"
    # st1: 500 IOPS of 1 MiB = 500 MiB/s; baseline 40 MiB/s crosses at 81.92 KiB.
    assert binding_limit(1024, 500, 40, 1024).crossover_io_kib == pytest.approx(81.92)


def test_volume_binding_limit_sustained_and_burst() -> None:
    gp2 = volume_limits("gp2", 200)  # baseline 600 IOPS / 150 MiB/s, burst 3,000 / 250 (docs/reference/gp2-burst.md#gp2-throughput)
    sustained = volume_binding_limit(gp2, 256)
    burst = volume_binding_limit(gp2, 256, burst=True)
    assert (sustained.binds, sustained.max_ios_per_second) == ("both", 600)
    assert (burst.binds, burst.max_ios_per_second) == ("throughput", 1000)


def test_unit_reexports() -> None:
    # docs/reference/ec2-ebs-limits.md#limits-table: 4,750 Mbps = 593.75 MB/s ≈ 566 MiB/s (docs/reference/ec2-ebs-limits.md#units).
    assert round(mb_to_mib(mbps_to_mb_per_s(4750))) == 566
