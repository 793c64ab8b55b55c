"""On-demand EBS prices (USD) and the monthly cost of one volume.

Prices are us-east-1, from docs/reference/ebs-prices.md#prices-us-east-1 (which cites AWS Prescriptive Guidance "Migrate Amazon EBS volumes
from gp2 to gp3" for gp2/gp3 [verified] and third-party copies of aws.amazon.com/ebs/pricing for io1, io2,
st1, sc1 [3rd-party]). AWS bills "per GB-month" on the provisioned size in GiB: the docs/reference/ebs-prices.md#worked-example worked check
multiplies 500 GiB by $0.08 to get $40, so size_gib is multiplied by the per-GB price unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from headroom.domain.catalog.errors import CatalogError, UnknownVolumeType
from headroom.domain.references import EBS_PRICING, GP2_TO_GP3

DEFAULT_REGION = "us-east-1"

# AWS Pricing Calculator convention: 730 hours per month (365 × 24 / 12). Used for instance monthly prices.
HOURS_PER_MONTH = 730.0


@dataclass(frozen=True)
class IopsTier:
    """A band of provisioned IOPS billed at one price: IOPS above `above` (and up to the next tier)."""

    above: int
    usd_per_iops_month: float


@dataclass(frozen=True)
class EbsPrice:
    """Price rules of one volume type in one region."""

    volume_type: str
    usd_per_gb_month: float
    iops_tiers: tuple[IopsTier, ...] = ()  # empty: IOPS not billed separately
    free_iops: int = 0
    usd_per_mibps_month: float = 0.0
    free_throughput_mibps: float = 0.0
    source: str = ""


_SRC_PG = f"{GP2_TO_GP3.cite()}, us-east-1"
# io1/io2/st1/sc1: the published page's us-east-1 figures as quoted by third-party copies (not yet checked against
# the Price List API; `headroom catalog refresh-instances` reads instance prices only).
_SRC_3P = f"{EBS_PRICING.cite()}, us-east-1"

EBS_PRICES: dict[str, dict[str, EbsPrice]] = {
    "us-east-1": {
        # gp3: $0.08/GB-month; 3,000 IOPS free then $0.005/IOPS-month; 125 MiB/s free then $0.04/MiB/s-month.
        "gp3": EbsPrice(
            "gp3",
            usd_per_gb_month=0.08,
            iops_tiers=(IopsTier(above=3000, usd_per_iops_month=0.005),),
            free_iops=3000,
            usd_per_mibps_month=0.04,
            free_throughput_mibps=125.0,
            source=_SRC_PG,
        ),
        # gp2: $0.10/GB-month, performance included.
        "gp2": EbsPrice("gp2", usd_per_gb_month=0.10, source=_SRC_PG),
        # io1: $0.125/GB-month + $0.065 per provisioned IOPS-month.
        "io1": EbsPrice(
            "io1",
            usd_per_gb_month=0.125,
            iops_tiers=(IopsTier(above=0, usd_per_iops_month=0.065),),
            source=_SRC_3P,
        ),
        # io2: $0.125/GB-month; IOPS $0.065 (<= 32,000), $0.046 (32,001-64,000), $0.032 (> 64,000).
        # The exact decimals of tiers 2 and 3 are [UNCONFIRMED] (docs/reference/ebs-prices.md#open-questions).
        "io2": EbsPrice(
            "io2",
            usd_per_gb_month=0.125,
            iops_tiers=(
                IopsTier(above=0, usd_per_iops_month=0.065),
                IopsTier(above=32_000, usd_per_iops_month=0.046),
                IopsTier(above=64_000, usd_per_iops_month=0.032),
            ),
            source=_SRC_3P,
        ),
        "st1": EbsPrice("st1", usd_per_gb_month=0.045, source=_SRC_3P),
        "sc1": EbsPrice("sc1", usd_per_gb_month=0.015, source=_SRC_3P),
    }
}


@dataclass(frozen=True)
class CostBreakdown:
    """Monthly cost of one volume, split by what is billed."""

    storage_usd: float
    iops_usd: float
    throughput_usd: float
    region: str
    price_region: str  # the region whose prices were used (differs from `region` when we had none for it)
    source: str

    @property
    def total_usd(self) -> float:
        return self.storage_usd + self.iops_usd + self.throughput_usd


def ebs_price_region(region: str) -> str:
    """Return the region whose EBS prices are used for `region` (us-east-1 where we have none for it)."""
    return region if region in EBS_PRICES else DEFAULT_REGION


def ebs_price(volume_type: str, region: str = DEFAULT_REGION) -> EbsPrice:
    """Return the price rules of a volume type in a region (CatalogError when the region has no prices)."""
    regional = EBS_PRICES.get(region)
    if regional is None:
        raise CatalogError(f"no EBS prices for region {region!r} (known: {', '.join(sorted(EBS_PRICES))})")
    price = regional.get(volume_type)
    if price is None:
        raise UnknownVolumeType(f"no price for volume type {volume_type!r}")
    return price


def tiered_iops_cost(iops: float, tiers: tuple[IopsTier, ...]) -> float:
    """Cost of `iops` provisioned IOPS for one month across ascending price tiers."""
    cost = 0.0
    for i, tier in enumerate(tiers):
        upper = tiers[i + 1].above if i + 1 < len(tiers) else float("inf")
        billed = max(0.0, min(iops, upper) - tier.above)
        cost += billed * tier.usd_per_iops_month
    return cost


def ebs_monthly_cost(
    volume_type: str,
    size_gib: float,
    iops: float | None = None,
    throughput_mibps: float | None = None,
    *,
    region: str = DEFAULT_REGION,
) -> CostBreakdown:
    """Return the on-demand monthly cost of one volume; regions without data fall back to us-east-1 prices."""
    price_region = ebs_price_region(region)
    price = ebs_price(volume_type, price_region)
    storage = size_gib * price.usd_per_gb_month
    iops_cost = tiered_iops_cost(iops or 0.0, price.iops_tiers) if price.iops_tiers else 0.0
    throughput_cost = 0.0
    if price.usd_per_mibps_month and throughput_mibps is not None:
        throughput_cost = max(0.0, throughput_mibps - price.free_throughput_mibps) * price.usd_per_mibps_month
    return CostBreakdown(
        storage_usd=storage,
        iops_usd=iops_cost,
        throughput_usd=throughput_cost,
        region=region,
        price_region=price_region,
        source=price.source,
    )
