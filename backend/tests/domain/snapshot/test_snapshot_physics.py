"""The simulator's physics on one volume: clipping at ceilings, burst buckets, 256 KiB accounting, latency.

Expected numbers come from docs/reference/gp2-burst.md#worked-durations (gp2 bucket table), docs/reference/ebs-io-accounting.md#io-size-cap (256 KiB / 1 MiB accounting), docs/reference/ec2-ebs-limits.md#limits-table (instance
EBS limits) and docs/reference/pingcap-guidance.md#ebs-latency-at-the-limits (latency penalty at the IOPS limit "often more than 10 ms").
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from headroom.domain.snapshot.scenario import VolumeSpec
from headroom.domain.snapshot.simulate import simulate_volume

STEP = 60


def seconds_until(flags: np.ndarray) -> int:
    """Return the end time (s) of the first step where a condition holds."""
    hits = np.flatnonzero(flags)
    assert len(hits), "condition never held"
    return int(hits[0] + 1) * STEP


def test_gp2_500_gib_at_3000_iops_empties_after_3600_s() -> None:
    # docs/reference/gp2-burst.md#the-credit-bucket: 5.4e6 / (3,000 − 1,500) = 3,600 s.
    trace = simulate_volume(VolumeSpec(type="gp2", size_gib=500), [3000.0] * 120, 16)
    assert trace.burst_balance_pct is not None
    assert seconds_until(trace.burst_balance_pct <= 0) == 3600
    assert trace.served_counted_iops[:60] == pytest.approx(3000)
    assert trace.served_counted_iops[60:] == pytest.approx(1500)  # baseline afterwards
    # linear drain: 1/60 of the bucket per minute
    assert trace.burst_balance_pct[29] == pytest.approx(50.0)


@pytest.mark.parametrize(
    ("size_gib", "baseline", "burst_seconds", "refill_seconds"),
    [  # docs/reference/gp2-burst.md#worked-durations table (≤ 33.33 GiB row: 100 IOPS; 5.4e6/2,900 = 1,862 s)
        (20, 100, 1862, 54_000),
        (100, 300, 2000, 18_000),
        (334, 1002, 2703, 5389),
        (750, 2250, 7200, 2400),
    ],
)
def test_gp2_bucket_table(size_gib: int, baseline: int, burst_seconds: int, refill_seconds: int) -> None:
    steps = math.ceil(burst_seconds / STEP) + 5
    trace = simulate_volume(VolumeSpec(type="gp2", size_gib=size_gib), [3000.0] * steps, 16)
    assert trace.burst_balance_pct is not None
    emptied = seconds_until(trace.burst_balance_pct <= 0)
    assert burst_seconds <= emptied < burst_seconds + STEP
    assert trace.served_counted_iops[-1] == pytest.approx(baseline)

    steps = math.ceil(refill_seconds / STEP) + 5
    idle = simulate_volume(
        VolumeSpec(type="gp2", size_gib=size_gib, burst_balance_percent=0), [0.0] * steps, 16
    )
    assert idle.burst_balance_pct is not None
    full = seconds_until(idle.burst_balance_pct >= 100)
    assert refill_seconds - 1 <= full < refill_seconds + STEP


def test_gp2_of_1_tib_has_no_burst_balance() -> None:
    # docs/reference/cloudwatch.md#volume-metrics: BurstBalance is not reported when baseline >= burst (gp2 >= 1 TiB)
    trace = simulate_volume(VolumeSpec(type="gp2", size_gib=1024), [5000.0] * 10, 16)
    assert trace.burst_balance_pct is None
    assert trace.served_counted_iops == pytest.approx(3072)  # 3 IOPS/GiB


def test_iops_ceiling_clips_and_latency_jumps_by_more_than_10_ms() -> None:
    spec = VolumeSpec(type="gp3", size_gib=500)  # 3,000 IOPS included (docs/reference/ebs-volume-types.md#limits-per-volume-type)
    trace = simulate_volume(spec, [1500.0, 2700.0, 3600.0, 6000.0], 16)
    assert list(trace.served_counted_iops) == pytest.approx([1500, 2700, 3000, 3000])
    assert list(trace.iops_exceeded) == [0, 0, 1, 1]
    below, near, at, far = trace.read_latency_ms
    assert below < near < at < far
    assert at - near > 10.0  # docs/reference/pingcap-guidance.md#ebs-latency-at-the-limits: "often more than 10 ms"
    assert near < 5.0
    # Little's law: queue = served IOPS × latency
    assert trace.queue_length[2] == pytest.approx(3000 * at / 1000)


def test_throughput_ceiling_clips_large_io_before_iops() -> None:
    # gp3 includes 125 MiB/s; 256 KiB I/O reaches it at 500 IOPS (docs/reference/ebs-io-accounting.md#io-size-cap)
    trace = simulate_volume(VolumeSpec(type="gp3", size_gib=500), [400.0, 800.0], 256)
    assert list(trace.served_mibps) == pytest.approx([100.0, 125.0])
    assert list(trace.served_counted_iops) == pytest.approx([400.0, 500.0])
    assert list(trace.throughput_exceeded) == [0, 1]
    assert list(trace.iops_exceeded) == [0, 0]


def test_one_mib_ssd_io_counts_as_four() -> None:
    # docs/reference/ebs-io-accounting.md#io-size-cap: "a 1 MiB SSD I/O counts as 4 IOPS"; io2 at 3,000 IOPS allows 768 MiB/s (docs/reference/ebs-volume-types.md#limits-per-volume-type), so only
    # the IOPS ceiling can bind here
    spec = VolumeSpec(type="io2", size_gib=100, iops=3000)
    trace = simulate_volume(spec, [500.0, 1000.0], 1024)
    assert list(trace.served_counted_iops) == pytest.approx([2000.0, 3000.0])
    assert list(trace.served_ops) == pytest.approx([500.0, 750.0])
    assert list(trace.served_mibps) == pytest.approx([500.0, 750.0])
    assert list(trace.iops_exceeded) == [0, 1]


def test_st1_throughput_bucket_drains_to_baseline() -> None:
    # st1: 40 MiB/s per TiB baseline, 250 per TiB burst, 1 TiB of credits per TiB (docs/reference/ebs-volume-types.md#limits-per-volume-type, docs/reference/gp2-burst.md#st1-and-sc1-throughput-credits)
    spec = VolumeSpec(type="st1", size_gib=2048)
    steps = 120
    trace = simulate_volume(spec, [400.0] * steps, 1024)
    assert trace.burst_balance_pct is not None
    drain_seconds = 2048 * 1024 / (400 - 80)  # 6,553.6 s
    assert drain_seconds <= seconds_until(trace.burst_balance_pct <= 0) < drain_seconds + STEP
    assert trace.served_mibps[0] == pytest.approx(400)
    assert trace.served_mibps[-1] == pytest.approx(80)


def test_instance_burst_then_baseline() -> None:
    # m5.2xlarge: 287.5 MB/s baseline, 593.75 MB/s max for 30 min (docs/reference/ec2-ebs-limits.md#the-burst-rule, docs/reference/ec2-ebs-limits.md#limits-table); io1 6,000 IOPS caps at
    # 500 MiB/s (docs/reference/ebs-io-accounting.md#io-size-cap), so 2,000 × 256 KiB = 500 MiB/s passes the volume and the instance decides.
    baseline = 287.5e6 / 2**20
    maximum = 593.75e6 / 2**20
    trace = simulate_volume(
        VolumeSpec(type="io1", size_gib=1000, iops=6000), [2000.0] * 60, 256, instance_type="m5.2xlarge"
    )
    assert trace.instance_byte_balance_pct is not None
    # headroom.domain.physics.burst: bucket = 1,800 s × (max − baseline), drained at (demand − baseline)
    drain = 1800 * (maximum - baseline) / (500 - baseline)
    assert drain <= seconds_until(trace.instance_byte_balance_pct <= 0) < drain + STEP
    assert trace.served_mibps[0] == pytest.approx(500)
    assert trace.served_mibps[-1] == pytest.approx(baseline)
    assert trace.instance_fraction[-1] < 1
    assert trace.iops_exceeded[-1] == 0 and trace.throughput_exceeded[-1] == 0  # the volume is not the limit
    assert trace.read_latency_ms[-1] - trace.read_latency_ms[0] > 10


def test_sustained_instance_limit_binds_without_balance() -> None:
    # m5.4xlarge: 593.75 MB/s sustained, no burst (docs/reference/ec2-ebs-limits.md#limits-table); io2 20,000 IOPS allows 4,000 MiB/s
    trace = simulate_volume(
        VolumeSpec(type="io2", size_gib=1000, iops=20000), [3200.0] * 5, 256, instance_type="m5.4xlarge"
    )
    assert trace.instance_byte_balance_pct is None
    assert trace.served_mibps == pytest.approx(593.75e6 / 2**20)
