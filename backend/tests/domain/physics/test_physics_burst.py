"""Credit buckets. Expected numbers from docs/reference/gp2-burst.md#st1-and-sc1-throughput-credits (AWS "General Purpose SSD volumes", "Throughput Optimized HDD and Cold HDD volumes"), docs/reference/ec2-ebs-limits.md#the-burst-rule, and
docs/reference/gp2-burst.md#burst-time-from-cloudwatch (KloudDB, "Understanding Database IOPS – Part 1": 500 GB gp2 at BurstBalance 100 -> 3,600 s)."""

from __future__ import annotations

import pytest
from headroom.domain.catalog import instance_limits, volume_limits
from headroom.domain.physics.burst import (
    GP2_BUCKET_CREDITS,
    Gp2Bucket,
    HddThroughputBucket,
    InstanceEbsBucket,
    gp2_burst_duration_seconds,
    gp2_refill_seconds,
    gp2_seconds_to_empty,
    volume_bucket,
)


@pytest.mark.parametrize(
    ("size_gib", "baseline", "burst_from_full_s", "refill_from_empty_s"),
    [
        # docs/reference/gp2-burst.md#worked-durations table (whole seconds): GiB, baseline, burst at 3,000 from full, refill from empty.
        (33, 100, 1862, 54000),
        (100, 300, 2000, 18000),
        (334, 1002, 2703, 5389),
        (750, 2250, 7200, 2400),
        # docs/reference/gp2-burst.md#burst-time-from-cloudwatch: 500 GB, BurstBalance 100 -> 5.4e6 / (3000 - 1500) = 3,600 s.
        (500, 1500, 3600, 3600),
    ],
)
def test_gp2_table(
    size_gib: int, baseline: float, burst_from_full_s: float, refill_from_empty_s: float
) -> None:
    bucket = Gp2Bucket.for_size(size_gib)
    assert bucket.baseline_rate == baseline
    assert bucket.burst_rate == 3000
    assert bucket.capacity == 5_400_000  # docs/reference/gp2-burst.md#the-credit-bucket "up to 5.4 million I/O credits"
    assert bucket.seconds_to_empty(bucket.capacity, 3000) == pytest.approx(burst_from_full_s, abs=0.5)
    assert bucket.refill_seconds(0.0) == pytest.approx(refill_from_empty_s, abs=0.5)
    # module-level helpers agree
    assert gp2_seconds_to_empty(size_gib, balance_percent=100) == pytest.approx(burst_from_full_s, abs=0.5)
    assert gp2_refill_seconds(size_gib) == pytest.approx(refill_from_empty_s, abs=0.5)


@pytest.mark.parametrize("size_gib", [1000, 1024, 5334, 16384])
def test_gp2_large_volumes_do_not_burst(size_gib: int) -> None:
    # docs/reference/gp2-burst.md#worked-durations table: >= 1,000 GiB -> n/a.
    bucket = Gp2Bucket.for_size(size_gib)
    assert not bucket.bursts
    assert bucket.seconds_to_empty(GP2_BUCKET_CREDITS, 3000) is None
    assert bucket.seconds_to_empty(GP2_BUCKET_CREDITS, 20000) is None
    assert bucket.refill_seconds(0.0) is None
    assert gp2_burst_duration_seconds(GP2_BUCKET_CREDITS, bucket.baseline_rate) is None
    # the demand above baseline is not served
    _, served = bucket.step(GP2_BUCKET_CREDITS, 20000, 60)
    assert served == bucket.baseline_rate


@pytest.mark.parametrize(
    ("balance_pct", "baseline", "expected_s"),
    [
        # docs/reference/gp2-burst.md#the-credit-bucket documented formula credit_balance / (3000 - baseline); docs/reference/gp2-burst.md#burst-time-from-cloudwatch metric expression
        # credit*5400000/100/(3000-500*3).
        (100, 1500, 3600),
        (50, 1500, 1800),
        (10, 300, 200),
        (0, 1500, 0),
    ],
)
def test_documented_formula(balance_pct: float, baseline: float, expected_s: float) -> None:
    credits = balance_pct * 5_400_000 / 100
    assert gp2_burst_duration_seconds(credits, baseline) == pytest.approx(expected_s)
    size = baseline / 3
    assert Gp2Bucket.for_size(size).seconds_to_empty(credits) == pytest.approx(expected_s)


@pytest.mark.parametrize(
    ("size_gib", "balance_pct", "demand", "expected"),
    [
        # drain rate = min(demand, 3000) - baseline (docs/reference/gp2-burst.md#the-credit-bucket model); 500 GiB baseline 1,500.
        (500, 100, 2000, 5_400_000 / 500),  # 10,800 s
        (500, 100, 10_000, 3600),  # demand above burst is served at 3,000
        (500, 100, 1500, None),  # at baseline: never drains
        (500, 100, 800, None),  # below baseline: never drains
        (100, 25, 3000, 1_350_000 / 2700),  # 500 s
    ],
)
def test_seconds_to_empty_at_demand(
    size_gib: float, balance_pct: float, demand: float, expected: float | None
) -> None:
    got = gp2_seconds_to_empty(size_gib, demand, balance_percent=balance_pct)
    assert got == (None if expected is None else pytest.approx(expected))


@pytest.mark.parametrize(
    ("size_gib", "balance_pct", "demand", "expected"),
    [
        # refill = missing credits / (baseline - demand); docs/reference/gp2-burst.md#the-credit-bucket "earned at the baseline rate".
        (500, 0, 0, 3600),
        (500, 50, 0, 1800),
        (500, 0, 500, 5400),
        (500, 100, 0, 0),
        (500, 0, 1500, None),  # demand at baseline: never refills
    ],
)
def test_refill_seconds(size_gib: float, balance_pct: float, demand: float, expected: float | None) -> None:
    got = gp2_refill_seconds(size_gib, balance_percent=balance_pct, demand_iops=demand)
    assert got == (None if expected is None else pytest.approx(expected))


def test_balance_percent_and_credits_are_exclusive() -> None:
    with pytest.raises(ValueError):
        gp2_seconds_to_empty(500, balance_percent=50, balance_credits=1.0)
    with pytest.raises(ValueError):
        Gp2Bucket.for_size(500).credits_from_percent(101)


@pytest.mark.parametrize(
    ("balance", "demand", "dt", "new_balance", "served"),
    [
        # 500 GiB: baseline 1,500, burst 3,000, full = 5.4e6 -> 3,600 s at 3,000 IOPS.
        (5_400_000, 3000, 3600, 0, 3000),
        (5_400_000, 3000, 1800, 2_700_000, 3000),
        # empties at 3,600 s, then baseline for the rest: (3000 × 3600 + 1500 × 3600) / 7200 = 2,250.
        (5_400_000, 3000, 7200, 0, 2250),
        (0, 3000, 60, 0, 1500),  # empty: baseline only
        (0, 0, 3600, 5_400_000, 0),  # idle: refills at 1,500/s -> full after 3,600 s
        (0, 0, 7200, 5_400_000, 0),  # never above capacity
        (5_400_000, 1000, 60, 5_400_000, 1000),  # below baseline at full: stays full
        (1_000_000, 500, 100, 1_100_000, 500),  # earns (1500 - 500) × 100
    ],
)
def test_gp2_step(balance: float, demand: float, dt: float, new_balance: float, served: float) -> None:
    got_balance, got_served = Gp2Bucket.for_size(500).step(balance, demand, dt)
    assert got_balance == pytest.approx(new_balance)
    assert got_served == pytest.approx(served)


@pytest.mark.parametrize(
    ("volume_type", "size_gib", "baseline", "burst", "to_empty_s", "refill_s"),
    [
        # docs/reference/ebs-volume-types.md#limits-per-volume-type, docs/reference/gp2-burst.md#st1-and-sc1-throughput-credits: st1 40/250 MiB/s per TiB, 1 TiB of credits per TiB (1,048,576 MiB per TiB).
        ("st1", 1024, 40, 250, 1_048_576 / 210, 1_048_576 / 40),  # 4,993.2 s; 26,214.4 s
        ("st1", 2048, 80, 500, 2_097_152 / 420, 2_097_152 / 80),  # burst capped at 500
        (
            "st1",
            500,
            500 * 40 / 1024,
            500 * 250 / 1024,
            512_000 / (500 * 210 / 1024),
            512_000 / (500 * 40 / 1024),
        ),
        # sc1 12/80 MiB/s per TiB, cap 250.
        ("sc1", 1024, 12, 80, 1_048_576 / 68, 1_048_576 / 12),  # 15,420.2 s; 87,381.3 s
        ("sc1", 16384, 192, 250, 16_777_216 / 58, 16_777_216 / 192),
    ],
)
def test_hdd_buckets(
    volume_type: str, size_gib: float, baseline: float, burst: float, to_empty_s: float, refill_s: float
) -> None:
    bucket = HddThroughputBucket.for_volume(volume_type, size_gib)
    assert bucket.unit == "MiB/s"
    assert bucket.baseline_rate == pytest.approx(baseline)
    assert bucket.burst_rate == pytest.approx(burst)
    assert bucket.capacity == pytest.approx(size_gib * 1024)
    assert bucket.seconds_to_empty(bucket.capacity) == pytest.approx(to_empty_s)
    assert bucket.refill_seconds(0.0) == pytest.approx(refill_s)
    # the volume catalog and the bucket agree
    limits = volume_limits(volume_type, size_gib)
    assert limits.burst_throughput_mibps == pytest.approx(burst)
    assert limits.baseline_throughput_mibps == pytest.approx(baseline)


def test_st1_16_tib_does_not_burst() -> None:
    # docs/reference/ebs-volume-types.md#limits-per-volume-type: 40 × 16 = 640 capped at 500 = burst cap.
    bucket = HddThroughputBucket.for_volume("st1", 16384)
    assert not bucket.bursts
    assert bucket.seconds_to_empty(bucket.capacity, 500) is None


def test_hdd_bucket_rejects_other_types() -> None:
    with pytest.raises(ValueError):
        HddThroughputBucket.for_volume("gp3", 100)


@pytest.mark.parametrize(
    ("name", "io_refill_s"),
    [
        # docs/reference/ec2-ebs-limits.md#the-burst-rule: 30 minutes at maximum from full. Refill (model): 1,800 × (max - baseline) / baseline.
        ("m5.2xlarge", 1800 * (18750 - 12000) / 12000),  # 1,012.5 s
        ("m5.large", 1800 * (18750 - 3600) / 3600),  # 7,575 s
        ("r5b.large", 1800 * (43333 - 5417) / 5417),
    ],
)
def test_instance_buckets_hold_max_for_30_minutes(name: str, io_refill_s: float) -> None:
    inst = instance_limits(name)
    io = InstanceEbsBucket.for_iops(inst)
    byte = InstanceEbsBucket.for_throughput(inst)
    assert io.seconds_to_empty(io.capacity, inst.max_iops) == pytest.approx(1800)
    assert byte.seconds_to_empty(byte.capacity, inst.max_throughput_mibps) == pytest.approx(1800)
    assert io.refill_seconds(0.0) == pytest.approx(io_refill_s)
    assert byte.unit == "MiB/s" and byte.burst_rate == pytest.approx(inst.max_throughput_mibps)
    # at or below baseline the instance bucket never drains
    assert io.seconds_to_empty(io.capacity, inst.baseline_iops) is None


@pytest.mark.parametrize("name", ["m5.4xlarge", "i3.large", "r5b.16xlarge"])
def test_sustained_instances_have_no_bucket(name: str) -> None:
    # docs/reference/ec2-ebs-limits.md#the-burst-rule: sizes without an asterisk sustain the maximum indefinitely.
    inst = instance_limits(name)
    io = InstanceEbsBucket.for_iops(inst)
    assert not io.bursts
    assert io.capacity == 0
    assert io.seconds_to_empty(0.0, inst.max_iops) is None


@pytest.mark.parametrize(
    ("args", "kind"),
    [(("gp2", 500), "gp2"), (("st1", 1024), "st1"), (("sc1", 1024), "sc1"), (("gp3", 500), None)],
)
def test_volume_bucket(args: tuple[str, int], kind: str | None) -> None:
    bucket = volume_bucket(volume_limits(*args))
    assert (bucket.kind if bucket else None) == kind
