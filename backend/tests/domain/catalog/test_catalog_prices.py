"""EBS prices, us-east-1. Expected numbers from docs/reference/ebs-prices.md#prices-us-east-1 (AWS Prescriptive Guidance; pricing copies)."""

from __future__ import annotations

import pytest
from headroom.domain.catalog import CatalogError, ebs_monthly_cost, volume_limits
from headroom.domain.catalog.prices import HOURS_PER_MONTH, IopsTier, ebs_price, tiered_iops_cost


@pytest.mark.parametrize(
    ("args", "storage", "iops", "throughput", "total"),
    [
        # docs/reference/ebs-prices.md#worked-example worked check: 500 GiB × $0.08 = $40 + (250 - 125) × $0.04 = $5 -> $45.00.
        (("gp3", 500, 3000, 250), 40.0, 0.0, 5.0, 45.0),
        # docs/reference/ebs-prices.md#prices-us-east-1 gp3: 3,000 IOPS free, $0.005 per IOPS-month above: 1,000 GiB, 6,000 IOPS -> 80 + 15.
        (("gp3", 1000, 6000, 125), 80.0, 15.0, 0.0, 95.0),
        # docs/reference/ebs-prices.md#prices-us-east-1 gp2 $0.10/GB-month.
        (("gp2", 500), 50.0, 0.0, 0.0, 50.0),
        # docs/reference/ebs-prices.md#prices-us-east-1 io1 $0.125/GB-month + $0.065/IOPS-month: 100 GiB, 5,000 IOPS -> 12.5 + 325.
        (("io1", 100, 5000), 12.5, 325.0, 0.0, 337.5),
        # docs/reference/ebs-prices.md#prices-us-east-1 io2 tiers: 40,000 IOPS -> 32,000 × 0.065 + 8,000 × 0.046 = 2,080 + 368.
        (("io2", 100, 40000), 12.5, 2448.0, 0.0, 2460.5),
        # 100,000 IOPS -> 2,080 + 32,000 × 0.046 + 36,000 × 0.032 = 2,080 + 1,472 + 1,152.
        (("io2", 1000, 100000), 125.0, 4704.0, 0.0, 4829.0),
        # docs/reference/ebs-prices.md#prices-us-east-1 st1 $0.045, sc1 $0.015 per GB-month.
        (("st1", 1000), 45.0, 0.0, 0.0, 45.0),
        (("sc1", 1000), 15.0, 0.0, 0.0, 15.0),
    ],
)
def test_monthly_cost_table(
    args: tuple[object, ...], storage: float, iops: float, throughput: float, total: float
) -> None:
    cost = ebs_monthly_cost(*args)
    assert cost.storage_usd == pytest.approx(storage)
    assert cost.iops_usd == pytest.approx(iops)
    assert cost.throughput_usd == pytest.approx(throughput)
    assert cost.total_usd == pytest.approx(total)
    # volume_limits reports the same total for a valid configuration.
    assert volume_limits(*args).monthly_cost_usd == pytest.approx(total)


def test_gp3_default_volume_costs_storage_only() -> None:
    # docs/reference/ebs-prices.md#prices-us-east-1: 3,000 IOPS and 125 MiB/s included.
    assert volume_limits("gp3", 100).monthly_cost_usd == pytest.approx(8.0)


def test_tiered_cost_at_tier_edges() -> None:
    tiers = (IopsTier(0, 0.065), IopsTier(32_000, 0.046), IopsTier(64_000, 0.032))
    assert tiered_iops_cost(32_000, tiers) == pytest.approx(2080.0)
    assert tiered_iops_cost(64_000, tiers) == pytest.approx(2080.0 + 1472.0)
    assert tiered_iops_cost(0, tiers) == 0.0


def test_unknown_region_has_no_prices() -> None:
    with pytest.raises(CatalogError):
        ebs_price("gp3", "eu-west-1")


def test_hours_per_month() -> None:
    # AWS Pricing Calculator convention: 730 hours per month = 8,760 / 12.
    assert pytest.approx(365 * 24 / 12) == HOURS_PER_MONTH
