"""Unit conversions. Expected numbers from docs/reference/ec2-ebs-limits.md#the-burst-rule, docs/reference/ec2-ebs-limits.md#limits-table."""

from __future__ import annotations

import pytest
from headroom.domain.units import bytes_to_mib, gib_to_tib, mb_to_mib, mbps_to_mb_per_s, mib_to_mb


@pytest.mark.parametrize(
    ("mbps", "mb_per_s"),
    [
        # docs/reference/ec2-ebs-limits.md#limits-table table: bandwidth Mbps / 8 = throughput MB/s.
        (4750, 593.75),
        (2300, 287.5),
        (650, 81.25),
        (2375, 296.875),  # m6g.2xlarge; docs/reference/ec2-ebs-limits.md#limits-table prints the rounded 296.88
        (40000, 5000.0),
    ],
)
def test_mbps_to_mb_per_s(mbps: float, mb_per_s: float) -> None:
    assert mbps_to_mb_per_s(mbps) == pytest.approx(mb_per_s)


def test_mb_to_mib_matches_domain_example() -> None:
    # docs/reference/ec2-ebs-limits.md#units: "593.75 MB/s ≈ 566 MiB/s".
    assert mb_to_mib(593.75) == pytest.approx(566.24, abs=0.01)
    assert round(mb_to_mib(593.75)) == 566


@pytest.mark.parametrize("value", [0.0, 1.0, 125.0, 593.75, 2000.0])
def test_round_trip(value: float) -> None:
    assert mib_to_mb(mb_to_mib(value)) == pytest.approx(value)


def test_binary_sizes() -> None:
    assert bytes_to_mib(1024 * 1024) == 1.0
    assert mib_to_mb(1.0) == pytest.approx(1.048576)
    assert gib_to_tib(2048) == 2.0
