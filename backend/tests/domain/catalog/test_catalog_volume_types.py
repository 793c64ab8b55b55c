"""EBS volume limits. Expected numbers come from docs/reference/ebs-volume-types.md#limits-per-volume-type, docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025, docs/reference/gp2-burst.md#the-credit-bucket, docs/reference/ebs-io-accounting.md#io-size-cap (the AWS pages named there)."""

from __future__ import annotations

import pytest
from headroom.domain.catalog import CatalogError, UnknownVolumeType, VolumeLimits, volume_limits


# (type, GiB, iops, MiB/s) -> baseline IOPS, burst IOPS, baseline MiB/s, max MiB/s, bursts
@pytest.mark.parametrize(
    ("args", "baseline_iops", "burst_iops", "baseline_mibps", "max_mibps", "bursts"),
    [
        # docs/reference/gp2-burst.md#baseline-and-burst: baseline clamp(3 × GiB, 100, 16000); <= 33.33 GiB get 100; burst 3,000 below 1 TiB;
        # 128 MiB/s at <= 170 GiB.
        (("gp2", 10), 100, 3000, 128, 128, True),
        (("gp2", 33), 100, 3000, 128, 128, True),
        # docs/reference/gp2-burst.md#worked-durations table row 100 GiB: baseline 300.
        (("gp2", 100), 300, 3000, 128, 128, True),
        # docs/reference/gp2-burst.md#gp2-throughput: 170 GiB still 128 MiB/s.
        (("gp2", 170), 510, 3000, 128, 128, True),
        # docs/reference/gp2-burst.md#gp2-throughput: 170-334 GiB "can burst to 250 MiB/s"; sustained = 3 IOPS/GiB × 256 KiB = 0.75 × 250 = 187.5.
        (("gp2", 250), 750, 3000, 187.5, 250, True),
        # docs/reference/gp2-burst.md#gp2-throughput table row 334 GiB: baseline 1,002; 250 MiB/s at >= 334 GiB.
        (("gp2", 334), 1002, 3000, 250, 250, True),
        # docs/reference/gp2-burst.md#burst-time-from-cloudwatch / docs/reference/gp2-burst.md#the-credit-bucket: 500 GiB baseline 1,500 bursting to 3,000.
        (("gp2", 500), 1500, 3000, 250, 250, True),
        # docs/reference/gp2-burst.md#worked-durations table row 750 GiB: baseline 2,250.
        (("gp2", 750), 2250, 3000, 250, 250, True),
        # docs/reference/gp2-burst.md#worked-durations table row >= 1,000 GiB: baseline >= 3,000, burst n/a.
        (("gp2", 1000), 3000, None, 250, 250, False),
        # docs/reference/gp2-burst.md#baseline-and-burst: 16,000 cap reached at 5,334 GiB.
        (("gp2", 5333), 15999, None, 250, 250, False),
        (("gp2", 5334), 16000, None, 250, 250, False),
        (("gp2", 16384), 16000, None, 250, 250, False),
        # docs/reference/ebs-volume-types.md#limits-per-volume-type: gp3 3,000 IOPS + 125 MiB/s included (defaults); provisioned values otherwise.
        (("gp3", 500), 3000, None, 125, 125, False),
        (("gp3", 500, 3000, 250), 3000, None, 250, 250, False),
        # docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025: 80,000 IOPS at >= 160 GiB; 2,000 MiB/s at >= 8,000 IOPS.
        (("gp3", 160, 80000, 2000), 80000, None, 2000, 2000, False),
        (("gp3", 16, 8000, 2000), 8000, None, 2000, 2000, False),
        # docs/reference/ebs-io-accounting.md#io1-throughput-rule: io1 up to 32,000 IOPS: 256 KiB × IOPS, <= 500 MiB/s (reached at 2,000 IOPS).
        (("io1", 100, 1000), 1000, None, 250, 250, False),
        (("io1", 100, 2000), 2000, None, 500, 500, False),
        (("io1", 1000, 32000), 32000, None, 500, 500, False),
        # docs/reference/ebs-volume-types.md#limits-per-volume-type, docs/reference/ebs-io-accounting.md#io1-throughput-rule: io1 1,000 MiB/s needs 64,000 IOPS (16 KiB per IOPS above 32,000).
        (("io1", 1280, 64000), 64000, None, 1000, 1000, False),
        (("io1", 1000, 48000), 48000, None, 750, 750, False),
        # docs/reference/ebs-volume-types.md#limits-per-volume-type: io2 BE 0.256 MiB/s per IOPS up to 4,000 MiB/s.
        (("io2", 100, 10000), 10000, None, 2560, 2560, False),
        (("io2", 100, 15625), 15625, None, 4000, 4000, False),
        (("io2", 256, 256000), 256000, None, 4000, 4000, False),
        # docs/reference/ebs-volume-types.md#limits-per-volume-type: st1 40 MiB/s per TiB baseline, 250 per TiB burst, 500 cap; 500 IOPS at 1 MiB.
        (("st1", 1024), 500, None, 40, 250, True),
        (("st1", 2048), 500, None, 80, 500, True),
        (("st1", 16384), 500, None, 500, 500, False),  # 40 × 16 = 640 -> capped 500 = burst cap
        # docs/reference/ebs-volume-types.md#limits-per-volume-type: sc1 12 MiB/s per TiB baseline, 80 per TiB burst, 250 cap; 250 IOPS.
        (("sc1", 1024), 250, None, 12, 80, True),
        (("sc1", 16384), 250, None, 192, 250, True),
    ],
)
def test_volume_limits_table(
    args: tuple[object, ...],
    baseline_iops: float,
    burst_iops: float | None,
    baseline_mibps: float,
    max_mibps: float,
    bursts: bool,
) -> None:
    limits = volume_limits(*args)
    assert limits.valid, limits.problems
    assert limits.baseline_iops == pytest.approx(baseline_iops)
    assert limits.burst_iops == (None if burst_iops is None else pytest.approx(burst_iops))
    assert limits.baseline_throughput_mibps == pytest.approx(baseline_mibps)
    assert limits.max_throughput_mibps == pytest.approx(max_mibps)
    assert limits.bursts is bursts


@pytest.mark.parametrize(
    ("volume_type", "chunk"),
    # docs/reference/ebs-io-accounting.md#io-size-cap: "capped at 256 KiB for SSD volumes and 1,024 KiB for HDD volumes".
    [("gp2", 256), ("gp3", 256), ("io1", 256), ("io2", 256), ("st1", 1024), ("sc1", 1024)],
)
def test_io_chunk(volume_type: str, chunk: int) -> None:
    iops = 1000 if volume_type.startswith("io") else None
    assert volume_limits(volume_type, 500, iops).io_chunk_kib == chunk


@pytest.mark.parametrize(
    ("args", "kwargs", "problem"),
    [
        # docs/reference/ebs-volume-types.md#limits-per-volume-type size ranges.
        (("gp2", 0), {}, "size must be 1-16,384 GiB"),
        (("gp2", 16385), {}, "size must be 1-16,384 GiB"),
        (("gp3", 65537), {}, "size must be 1-65,536 GiB"),
        (("io1", 3, 100), {}, "size must be 4-16,384 GiB"),
        (("io2", 65537, 1000), {}, "size must be 4-65,536 GiB"),
        (("st1", 124), {}, "size must be 125-16,384 GiB"),
        (("sc1", 16385), {}, "size must be 125-16,384 GiB"),
        (("gp3", 100.5), {}, "whole number of GiB"),
        # docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025: gp3 3,000-80,000 IOPS, 125-2,000 MiB/s, 500 IOPS/GiB, 0.25 MiB/s per IOPS.
        (("gp3", 500, 80001), {}, "IOPS must be 3,000-80,000"),
        (("gp3", 500, 2999), {}, "IOPS must be 3,000-80,000"),
        (("gp3", 159, 80000), {}, "at most 500 IOPS per GiB"),
        (("gp3", 500, 16000, 2001), {}, "throughput must be 125-2,000"),
        (("gp3", 500, 3000, 124), {}, "throughput must be 125-2,000"),
        (("gp3", 500, 7999, 2000), {}, "0.25 MiB/s per provisioned IOPS"),
        # docs/reference/ebs-volume-types.md#limits-per-volume-type: io1 50:1 and 100-64,000; io2 1000:1 and 100-256,000; both need IOPS.
        (("io1", 100, 5001), {}, "at most 50 IOPS per GiB"),
        (("io1", 2000, 64001), {}, "IOPS must be 100-64,000"),
        (("io1", 100), {}, "io1 needs provisioned IOPS"),
        (("io2", 100, 100001), {}, "at most 1,000 IOPS per GiB"),
        (("io2", 1000, 256001), {}, "IOPS must be 100-256,000"),
        (("io2", 100), {}, "io2 needs provisioned IOPS"),
        # Only gp3 takes a throughput; gp2/st1/sc1 IOPS are not provisioned.
        (("gp2", 500, 5000), {}, "gp2 IOPS are not provisioned"),
        (("gp2", 500, None, 250), {}, "throughput is not provisioned"),
        (("io2", 500, 1000, 100), {}, "throughput is not provisioned"),
        (("st1", 500, 500), {}, "st1 IOPS are not provisioned"),
    ],
)
def test_invalid_configurations(args: tuple[object, ...], kwargs: dict[str, object], problem: str) -> None:
    limits = volume_limits(*args, **kwargs)
    assert limits.valid is False
    assert any(problem in p for p in limits.problems), limits.problems


@pytest.mark.parametrize(
    ("args", "valid"),
    [
        # docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025 thresholds, at and just past each one.
        (("gp3", 160, 80000), True),
        (("gp3", 16, 8000, 2000), True),
        (("gp3", 15, 8000, 2000), False),  # 8,000 IOPS needs 16 GiB at 500:1
        (("gp3", 1, 3000, 125), True),  # 3,000 IOPS included at any size
        (("gp3", 65536), True),
        (("io1", 100, 5000), True),  # 50:1
        (("io2", 64, 64000), True),  # 1000:1
        (("gp2", 500, 1500), True),  # DescribeVolumes reports gp2 Iops = baseline; accepted
        (("gp2", 1), True),
        (("st1", 125), True),
    ],
)
def test_boundaries(args: tuple[object, ...], valid: bool) -> None:
    assert volume_limits(*args).valid is valid


def test_unknown_type_raises_catalog_error() -> None:
    with pytest.raises(UnknownVolumeType):
        volume_limits("standard", 100)
    assert issubclass(UnknownVolumeType, CatalogError)
    assert issubclass(CatalogError, ValueError)


def test_type_name_is_case_insensitive() -> None:
    assert volume_limits("GP3", 100).volume_type == "gp3"


def test_to_dict_is_json_ready_and_carries_cost() -> None:
    data = volume_limits("gp3", 500, 3000, 250).to_dict()
    # docs/reference/ebs-prices.md#worked-example worked check: 500 GiB gp3 at 3,000 IOPS and 250 MiB/s = $45.00/month.
    assert data["monthly_cost_usd"] == pytest.approx(45.0)
    assert data["cost_breakdown"]["storage_usd"] == pytest.approx(40.0)
    assert data["cost_breakdown"]["throughput_usd"] == pytest.approx(5.0)
    assert data["burst_iops"] is None
    assert data["max_iops"] == 3000
    assert isinstance(data["problems"], list)


def test_unknown_region_prices_fall_back_with_a_note() -> None:
    limits = volume_limits("gp2", 100, region="eu-west-1")
    assert limits.cost_breakdown.price_region == "us-east-1"
    assert limits.monthly_cost_usd == pytest.approx(10.0)  # docs/reference/ebs-prices.md#prices-us-east-1 gp2 $0.10/GB-month
    assert any("eu-west-1" in n for n in limits.notes)


def test_volume_limits_is_frozen() -> None:
    limits = volume_limits("gp2", 100)
    assert isinstance(limits, VolumeLimits)
    with pytest.raises(AttributeError):
        limits.size_gib = 5
