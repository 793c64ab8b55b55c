"""The vectorised derived series. Expected numbers from docs/reference/, cited per case;
the scalar definitions in headroom.domain.physics.io are the oracle for every element."""

from __future__ import annotations

import numpy as np
import pytest
from headroom.domain import derived
from headroom.domain.physics.io import chunks_per_io, counted_ops
from hypothesis import given, settings
from hypothesis import strategies as st
from io_cases import CHUNKS_PER_IO_CASES

KIB = 1024.0
MIB = 1024.0 * 1024.0


@pytest.mark.parametrize(("io_kib", "chunk_kib", "chunks"), CHUNKS_PER_IO_CASES)
def test_chunks_per_io_vector_matches_the_cited_cases(io_kib: float, chunk_kib: int, chunks: int) -> None:
    got = derived.chunks_per_io(np.array([io_kib, io_kib]), chunk_kib)
    assert got.tolist() == [chunks, chunks]


def test_chunks_per_io_keeps_gaps_and_counts_empty_ios_once() -> None:
    got = derived.chunks_per_io(np.array([np.nan, 0.0, 256.0000001]), 256)
    assert np.isnan(got[0]) and got[1:].tolist() == [1.0, 1.0]  # float noise at the cap still counts once


# Formerly tests/services/test_metrics_core.py::test_counted_rate_equals_physics_counted_ops (the panels' copy).
@pytest.mark.parametrize(("ops", "size_kib", "chunk"), [(600, 16, 256), (600, 256, 256), (600, 512, 256),
                                                        (600, 300, 256), (100, 1024, 1024), (0, 0, 256)])  # fmt: skip
def test_counted_rate_equals_physics_counted_ops(ops: int, size_kib: float, chunk: int) -> None:
    got = derived.per_second(
        derived.counted_ops(np.array([float(ops)]), np.array([ops * size_kib * 1024.0]), chunk), 60
    )
    assert got[0] == pytest.approx(counted_ops(ops, ops * size_kib * 1024, chunk) / 60)


def test_counted_iops_of_a_step() -> None:
    # docs/reference/ebs-io-accounting.md#io-size-cap: 6,000 reads of 1 MiB in a 60 s step on SSD = 100 IOPS issued, counted as 400; 6,000 writes of 16 KiB
    # count once each (100 IOPS). A gap in either sum is a gap; no ops is 0 whatever the bytes.
    read_ops = np.array([6000.0, np.nan, 0.0])
    read_bytes = np.array([6000 * MIB, 1.0, np.nan])
    write_ops = np.array([6000.0, 6000.0, 0.0])
    write_bytes = np.array([6000 * 16 * KIB, 6000 * 16 * KIB, 0.0])
    got = derived.counted_iops(read_ops, write_ops, read_bytes, write_bytes, 256, 60)
    assert got[0] == pytest.approx(500.0)
    assert np.isnan(got[1])
    assert got[2] == 0.0


def test_counted_ops_refuses_negative_sums_as_gaps() -> None:
    got = derived.counted_ops(np.array([-1.0, 10.0]), np.array([10.0, -5.0]), 256)
    assert np.isnan(got).all()


@settings(max_examples=300, deadline=None)
@given(
    ops=st.lists(st.floats(min_value=0, max_value=1e7, allow_nan=False), min_size=1, max_size=20),
    size_kib=st.floats(min_value=0, max_value=16_384, allow_nan=False),
    chunk=st.sampled_from([256, 1024]),
)
def test_vector_counted_ops_equals_the_scalar_definition(
    ops: list[float], size_kib: float, chunk: int
) -> None:
    total = [o * size_kib * KIB for o in ops]
    got = derived.counted_ops(np.array(ops), np.array(total), chunk)
    assert got.tolist() == [counted_ops(o, b, chunk) for o, b in zip(ops, total, strict=True)]
    sizes = np.array([size_kib])
    assert derived.chunks_per_io(sizes, chunk)[0] == chunks_per_io(size_kib, chunk)


def test_rates_and_average_size() -> None:
    # docs/reference/cloudwatch.md#volume-metrics: AWS/EBS sums per period; IOPS = Sum(ops) / period, MiB/s = Sum(bytes) / period / 2^20, and the
    # average I/O size = Sum(bytes) / Sum(ops) ("a figure near 44 KiB ...", docs/reference/ebs-io-accounting.md#io-size-cap).
    ops = np.array([6000.0, 0.0])
    nbytes = np.array([6000 * 44 * KIB, 0.0])
    assert derived.per_second(ops, 60).tolist() == [100.0, 0.0]
    assert derived.mib_per_second(nbytes, 60)[0] == pytest.approx(100 * 44 / 1024)
    avg = derived.avg_io_kib(ops, nbytes)
    assert avg[0] == pytest.approx(44.0) and np.isnan(avg[1])  # no ops: no average size


def test_latency_is_total_time_over_ops() -> None:
    # docs/reference/cloudwatch.md#volume-metrics: "Avg latency = Sum(TotalReadTime)/Sum(ReadOps) (x1000 for ms)": 12 s over 6,000 ops = 2 ms.
    got = derived.latency_ms(np.array([12.0, 1.0, np.nan]), np.array([6000.0, 0.0, 10.0]))
    assert got[0] == pytest.approx(2.0) and np.isnan(got[1]) and np.isnan(got[2])


def test_hit_ratio_is_hits_over_lookups() -> None:
    # docs/reference/tikv-metrics.md#metric-names: hit ratio = hit / (hit + miss) of tikv_engine_cache_efficiency.
    got = derived.hit_ratio(np.array([900.0, 0.0, 5.0]), np.array([100.0, 0.0, np.nan]))
    assert got[0] == pytest.approx(0.9) and np.isnan(got[1]) and np.isnan(got[2])


def test_utilisation_needs_a_positive_limit() -> None:
    got = derived.utilisation(np.array([2700.0, 10.0, 5.0]), np.array([3000.0, 0.0, -1.0]))
    assert got[0] == pytest.approx(0.9) and np.isnan(got[1:]).all()
    assert derived.utilisation(np.array([1500.0]), 3000.0).tolist() == [0.5]


@pytest.mark.parametrize(("volume_type", "chunk"), [("gp3", 256), ("io2", 256), ("st1", 1024), ("sc1", 1024),
                                                    ("standard", 256)])  # fmt: skip
def test_io_chunk_by_volume_type(volume_type: str, chunk: int) -> None:
    # docs/reference/ebs-io-accounting.md#io-size-cap: 256 KiB for SSD, 1,024 KiB for HDD; the previous-generation magnetic type is counted like SSD.
    assert derived.io_chunk_kib(volume_type) == chunk


def test_io_view_bundles_the_formulas() -> None:
    from datetime import UTC, datetime

    start = datetime(2026, 1, 5, tzinfo=UTC)
    view = derived.io_view(
        start=start, step_seconds=60, chunk_kib=256,
        read_ops=np.array([6000.0]), write_ops=np.array([0.0]),
        read_bytes=np.array([6000 * MIB]), write_bytes=np.array([0.0]),
        read_time=np.array([12.0]),
    )  # fmt: skip
    assert view.counted_iops[0] == pytest.approx(400.0) and view.iops[0] == pytest.approx(100.0)
    assert view.mibps[0] == pytest.approx(100.0) and view.read_latency_ms[0] == pytest.approx(2.0)
    assert np.isnan(view.write_latency_ms[0]) and np.isnan(view.queue_length[0])
    assert view.timestamps == [start]
