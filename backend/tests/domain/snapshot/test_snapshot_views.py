"""Derived views: CloudWatch sums to IOPS, counted IOPS (256 KiB / 1 MiB chunks), MiB/s, latency."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from headroom.domain.snapshot import views
from headroom.domain.snapshot.files import snapshot_from_dict
from test_snapshot_schema import minimal  # type: ignore[import-not-found]


def with_series(volume_type: str, metrics: dict[str, list[Any]]) -> Any:
    doc = minimal()
    doc["volumes"][0]["type"] = volume_type
    if volume_type != "gp3":
        doc["volumes"][0]["iops"] = None
    units = {"ebs.read_ops": "Count", "ebs.write_ops": "Count", "ebs.read_bytes": "Bytes", "ebs.write_bytes": "Bytes",
             "ebs.total_read_time": "Seconds", "ebs.queue_length": "Count"}  # fmt: skip
    doc["series"] = [
        {
            "entity": {"kind": "volume", "id": "vol-1"},
            "metric": name,
            "unit": units[name],
            "statistic": "Average" if name == "ebs.queue_length" else "Sum",
            "start": "2026-01-05T00:00:00Z",
            "step_seconds": 60,
            "values": values,
        }
        for name, values in metrics.items()
    ]
    return snapshot_from_dict(doc)


@pytest.mark.parametrize(
    ("volume_type", "io_kib", "counted_per_io"),
    [  # docs/reference/ebs-io-accounting.md#io-size-cap: capped at 256 KiB on SSD (1 MiB I/O counts 4), 1,024 KiB on HDD
        ("gp3", 16, 1),
        ("gp3", 256, 1),
        ("gp3", 1024, 4),
        ("st1", 1024, 1),
        ("st1", 4096, 4),
    ],
)
def test_counted_iops_follow_the_chunk(volume_type: str, io_kib: int, counted_per_io: int) -> None:
    ops = 6000  # per 60 s step = 100 IOPS
    snap = with_series(
        volume_type,
        {"ebs.read_ops": [ops, None], "ebs.read_bytes": [ops * io_kib * 1024, None], "ebs.write_ops": [0, 0],
         "ebs.write_bytes": [0, 0]},
    )  # fmt: skip
    io = views.volume_io(snap, "vol-1")
    assert io.read_iops[0] == pytest.approx(100)
    assert io.counted_iops[0] == pytest.approx(100 * counted_per_io)
    assert io.read_mibps[0] == pytest.approx(100 * io_kib / 1024)
    assert io.avg_read_kib[0] == pytest.approx(io_kib)
    assert np.isnan(io.read_iops[1]) and np.isnan(io.counted_iops[1])  # a gap stays a gap


def test_latency_and_queue_come_from_cloudwatch_formulas() -> None:
    # docs/reference/cloudwatch.md#volume-metrics: avg latency = Sum(TotalReadTime) / Sum(ReadOps)
    snap = with_series(
        "gp3",
        {"ebs.read_ops": [6000], "ebs.read_bytes": [6000 * 16384], "ebs.total_read_time": [12.0],
         "ebs.queue_length": [0.2]},
    )  # fmt: skip
    io = views.volume_io(snap, "vol-1")
    assert io.read_latency_ms[0] == pytest.approx(2.0)
    assert io.queue_length[0] == pytest.approx(0.2)
    assert np.isnan(io.write_iops[0])  # absent series read as gaps


def test_missing_series_is_a_clear_error() -> None:
    snap = with_series("gp3", {"ebs.write_ops": [1]})
    with pytest.raises(KeyError, match="has no ebs.read_ops"):
        views.volume_io(snap, "vol-1")
    assert views.find_series(snap, "volume", "vol-1", "ebs.burst_balance") is None
