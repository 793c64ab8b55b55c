"""EBS volume types: valid sizes, IOPS and throughput rules, what bursts, and the limits of one volume.

Sources (docs/reference/, each page names the AWS page it restates):
- docs/reference/ebs-volume-types.md#limits-per-volume-type limits per volume (AWS, "Amazon EBS volume types", "General Purpose SSD volumes",
  "Provisioned IOPS SSD volumes", "Throughput Optimized HDD and Cold HDD volumes").
- docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025 gp3 limits raised in 2025 (EC2 API CreateVolume/ModifyVolume docs; AWS Prescriptive Guidance).
- docs/reference/gp2-burst.md gp2 baseline, burst and throughput bands (AWS, "General Purpose SSD volumes").
- docs/reference/ebs-io-accounting.md#io-size-cap I/O accounting chunk: 256 KiB SSD, 1,024 KiB HDD (AWS, "Amazon EBS I/O characteristics and monitoring").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from headroom.domain import references as refs
from headroom.domain.catalog.errors import UnknownVolumeType
from headroom.domain.catalog.prices import CostBreakdown, ebs_monthly_cost
from headroom.domain.units import gib_to_tib

Media = Literal["ssd", "hdd"]

SSD_IO_CHUNK_KIB = 256  # docs/reference/ebs-io-accounting.md#io-size-cap "I/O size is capped at 256 KiB for SSD volumes"
HDD_IO_CHUNK_KIB = 1024  # docs/reference/ebs-io-accounting.md#io-size-cap "... and 1,024 KiB for HDD volumes"

# gp2 (docs/reference/gp2-burst.md#baseline-and-burst): baseline = clamp(3 × GiB, 100, 16000); volumes with baseline < 3,000 burst to 3,000 IOPS.
GP2_IOPS_PER_GIB = 3
GP2_MIN_IOPS = 100
GP2_MAX_IOPS = 16_000
GP2_BURST_IOPS = 3_000
# gp2 throughput (docs/reference/gp2-burst.md#gp2-throughput): 128 MiB/s at <= 170 GiB; 170-334 GiB burst to 250; 250 at >= 334 GiB;
# `throughput = IOPS × I/O size` capped at 250 MiB/s.
GP2_MIN_THROUGHPUT_MIBPS = 128.0
GP2_MAX_THROUGHPUT_MIBPS = 250.0
GP2_SMALL_MAX_GIB = 170
GP2_FULL_THROUGHPUT_GIB = 334

# gp3 (docs/reference/ebs-volume-types.md#limits-per-volume-type, docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025, 2025 values): 3,000-80,000 IOPS, 125-2,000 MiB/s, 1-65,536 GiB, 500 IOPS/GiB,
# at most 0.25 MiB/s per provisioned IOPS; 3,000 IOPS + 125 MiB/s included.
GP3_DEFAULT_IOPS = 3_000
GP3_DEFAULT_THROUGHPUT_MIBPS = 125.0
GP3_MAX_MIBPS_PER_IOPS = 0.25

# io1 (docs/reference/ebs-volume-types.md#limits-per-volume-type, docs/reference/ebs-io-accounting.md#io1-throughput-rule): up to 32,000 IOPS the max throughput is 256 KiB × IOPS capped at 500 MiB/s; above 32,000
# IOPS it is 16 KiB per provisioned IOPS up to 1,000 MiB/s (AWS, "Provisioned IOPS SSD volumes", older rule).
IO1_LOW_IOPS_LIMIT = 32_000
IO1_LOW_MIBPS_PER_IOPS = 0.25  # 256 KiB
IO1_LOW_MAX_MIBPS = 500.0
IO1_HIGH_MIBPS_PER_IOPS = 16 / 1024  # 16 KiB
# io2 Block Express (docs/reference/ebs-volume-types.md#limits-per-volume-type): 0.256 MiB/s per IOPS up to 4,000 MiB/s.
IO2_MIBPS_PER_IOPS = 0.256

# Throughput-credit HDD (docs/reference/ebs-volume-types.md#limits-per-volume-type, docs/reference/gp2-burst.md#st1-and-sc1-throughput-credits): baseline and burst MiB/s per TiB of volume, capped per volume.


@dataclass(frozen=True)
class VolumeTypeSpec:
    """The static rules of one EBS volume type."""

    name: str
    media: Media
    min_size_gib: int
    max_size_gib: int
    provisioned_iops: bool  # IOPS are a parameter of the volume (gp3, io1, io2)
    min_iops: int
    max_iops: int
    max_iops_per_gib: float | None
    provisioned_throughput: bool  # throughput is a parameter (gp3 only)
    min_throughput_mibps: float
    max_throughput_mibps: float
    bursts: bool  # has a credit bucket (gp2 IOPS; st1/sc1 throughput)
    baseline_mibps_per_tib: float | None = None  # st1/sc1
    burst_mibps_per_tib: float | None = None  # st1/sc1
    source: str = ""

    @property
    def io_chunk_kib(self) -> int:
        return SSD_IO_CHUNK_KIB if self.media == "ssd" else HDD_IO_CHUNK_KIB


VOLUME_TYPES: dict[str, VolumeTypeSpec] = {
    "gp2": VolumeTypeSpec(
        name="gp2",
        media="ssd",
        min_size_gib=1,
        max_size_gib=16_384,
        provisioned_iops=False,
        min_iops=GP2_MIN_IOPS,
        max_iops=GP2_MAX_IOPS,
        max_iops_per_gib=GP2_IOPS_PER_GIB,
        provisioned_throughput=False,
        min_throughput_mibps=GP2_MIN_THROUGHPUT_MIBPS,
        max_throughput_mibps=GP2_MAX_THROUGHPUT_MIBPS,
        bursts=True,
        source=refs.EBS_GP.cite(),
    ),
    "gp3": VolumeTypeSpec(
        name="gp3",
        media="ssd",
        min_size_gib=1,
        max_size_gib=65_536,
        provisioned_iops=True,
        min_iops=3_000,
        max_iops=80_000,
        max_iops_per_gib=500,
        provisioned_throughput=True,
        min_throughput_mibps=125.0,
        max_throughput_mibps=2_000.0,
        bursts=False,
        source=refs.EBS_GP.cite("gp3, limits raised in 2025"),
    ),
    "io1": VolumeTypeSpec(
        name="io1",
        media="ssd",
        min_size_gib=4,
        max_size_gib=16_384,
        provisioned_iops=True,
        min_iops=100,
        max_iops=64_000,
        max_iops_per_gib=50,
        provisioned_throughput=False,
        min_throughput_mibps=0.0,
        max_throughput_mibps=1_000.0,
        bursts=False,
        source=refs.EBS_PIOPS.cite("io1"),
    ),
    "io2": VolumeTypeSpec(
        name="io2",
        media="ssd",
        min_size_gib=4,
        max_size_gib=65_536,
        provisioned_iops=True,
        min_iops=100,
        max_iops=256_000,
        max_iops_per_gib=1_000,
        provisioned_throughput=False,
        min_throughput_mibps=0.0,
        max_throughput_mibps=4_000.0,
        bursts=False,
        source=refs.EBS_PIOPS.cite("io2 Block Express"),
    ),
    "st1": VolumeTypeSpec(
        name="st1",
        media="hdd",
        min_size_gib=125,
        max_size_gib=16_384,
        provisioned_iops=False,
        min_iops=500,
        max_iops=500,
        max_iops_per_gib=None,
        provisioned_throughput=False,
        min_throughput_mibps=0.0,
        max_throughput_mibps=500.0,
        bursts=True,
        baseline_mibps_per_tib=40.0,
        burst_mibps_per_tib=250.0,
        source=refs.EBS_HDD.cite(),
    ),
    "sc1": VolumeTypeSpec(
        name="sc1",
        media="hdd",
        min_size_gib=125,
        max_size_gib=16_384,
        provisioned_iops=False,
        min_iops=250,
        max_iops=250,
        max_iops_per_gib=None,
        provisioned_throughput=False,
        min_throughput_mibps=0.0,
        max_throughput_mibps=250.0,
        bursts=True,
        baseline_mibps_per_tib=12.0,
        burst_mibps_per_tib=80.0,
        source=refs.EBS_HDD.cite(),
    ),
}


# The volume types bought with provisioned figures rather than figures derived from the size (the specs' own
# `provisioned_iops` / `provisioned_throughput`, docs/reference/ebs-volume-types.md#limits-per-volume-type): every
# reader (the limits resolver, the ceilings' kinds, the rules, what-if) takes these, never a list of its own.
PROVISIONED_IOPS_TYPES: frozenset[str] = frozenset(
    name for name, spec in VOLUME_TYPES.items() if spec.provisioned_iops
)
PROVISIONED_THROUGHPUT_TYPES: frozenset[str] = frozenset(
    name for name, spec in VOLUME_TYPES.items() if spec.provisioned_throughput
)


@dataclass(frozen=True)
class VolumeLimits:
    """The performance limits and monthly cost of one EBS volume configuration.

    IOPS are counted in `io_chunk_kib` units (docs/reference/ebs-io-accounting.md#io-size-cap). For st1/sc1, `baseline_iops` is the per-volume operation
    cap (500/250 at 1 MiB I/O, docs/reference/ebs-volume-types.md#limits-per-volume-type) and the credit bucket is in throughput (`burst_throughput_mibps`).
    """

    volume_type: str
    size_gib: float
    provisioned_iops: int | None
    provisioned_throughput_mibps: float | None
    baseline_iops: float
    burst_iops: float | None
    baseline_throughput_mibps: float
    burst_throughput_mibps: float | None
    max_throughput_mibps: float
    io_chunk_kib: int
    media: Media
    bursts: bool
    valid: bool
    problems: tuple[str, ...]
    notes: tuple[str, ...]
    monthly_cost_usd: float
    cost_breakdown: CostBreakdown
    source: str

    @property
    def max_iops(self) -> float:
        """Highest IOPS the volume can serve (burst when it bursts)."""
        return self.burst_iops if self.burst_iops is not None else self.baseline_iops

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (field names as in the dataclass, plus max_iops)."""
        data = asdict(self)
        data["problems"] = list(self.problems)
        data["notes"] = list(self.notes)
        data["max_iops"] = self.max_iops
        data["cost_breakdown"]["total_usd"] = self.cost_breakdown.total_usd
        return data


def volume_type_spec(volume_type: str) -> VolumeTypeSpec:
    """Return the rules of a volume type (UnknownVolumeType when it is not gp2/gp3/io1/io2/st1/sc1)."""
    spec = VOLUME_TYPES.get(volume_type.lower()) if isinstance(volume_type, str) else None
    if spec is None:
        raise UnknownVolumeType(f"unknown EBS volume type {volume_type!r} (known: {', '.join(VOLUME_TYPES)})")
    return spec


def list_volume_types() -> list[VolumeTypeSpec]:
    """Return every volume type the catalog knows."""
    return list(VOLUME_TYPES.values())


def gp2_baseline_iops(size_gib: float) -> float:
    """Return gp2 baseline IOPS: clamp(3 × GiB, 100, 16,000) (docs/reference/gp2-burst.md#baseline-and-burst)."""
    return float(min(max(GP2_IOPS_PER_GIB * size_gib, GP2_MIN_IOPS), GP2_MAX_IOPS))


def gp2_bursts(size_gib: float) -> bool:
    """Return whether a gp2 volume can burst: only while its baseline is below 3,000 IOPS (< 1 TiB, docs/reference/gp2-burst.md#the-credit-bucket)."""
    return gp2_baseline_iops(size_gib) < GP2_BURST_IOPS


def gp2_throughput_mibps(size_gib: float) -> tuple[float, float | None]:
    """Return gp2 (baseline, burst) throughput in MiB/s for a size (docs/reference/gp2-burst.md#gp2-throughput).

    The documented bands are 128 MiB/s up to 170 GiB, "burst to 250" between 170 and 334 GiB, 250 from
    334 GiB. Inside the band the sustained value follows the same section's formula
    `throughput = IOPS × I/O size` at the 256 KiB chunk, i.e. 3 IOPS/GiB × 0.25 MiB = 0.75 MiB/s per GiB
    (127.5 at 170 GiB, 250.5 at 334 GiB), clamped to [128, 250]; the burst value is 250 MiB/s (only while
    IOPS credits last).
    """
    sustained = min(
        max(gp2_baseline_iops(size_gib) * SSD_IO_CHUNK_KIB / 1024, GP2_MIN_THROUGHPUT_MIBPS),
        GP2_MAX_THROUGHPUT_MIBPS,
    )
    if GP2_SMALL_MAX_GIB < size_gib < GP2_FULL_THROUGHPUT_GIB and gp2_bursts(size_gib):
        return sustained, GP2_MAX_THROUGHPUT_MIBPS
    return sustained, None


def hdd_throughput_mibps(spec: VolumeTypeSpec, size_gib: float) -> tuple[float, float]:
    """Return st1/sc1 (baseline, burst) MiB/s: per-TiB rates capped at the per-volume maximum (docs/reference/ebs-volume-types.md#limits-per-volume-type)."""
    assert spec.baseline_mibps_per_tib is not None and spec.burst_mibps_per_tib is not None
    tib = gib_to_tib(size_gib)
    baseline = min(spec.baseline_mibps_per_tib * tib, spec.max_throughput_mibps)
    burst = min(spec.burst_mibps_per_tib * tib, spec.max_throughput_mibps)
    return baseline, burst


def io1_max_throughput_mibps(iops: float) -> float:
    """Return io1 max MiB/s: 256 KiB × IOPS (<= 500) to 32,000 IOPS, then 16 KiB × IOPS (<= 1,000) (docs/reference/ebs-io-accounting.md#io1-throughput-rule)."""
    if iops <= IO1_LOW_IOPS_LIMIT:
        return min(iops * IO1_LOW_MIBPS_PER_IOPS, IO1_LOW_MAX_MIBPS)
    return min(
        max(iops * IO1_HIGH_MIBPS_PER_IOPS, IO1_LOW_MAX_MIBPS), VOLUME_TYPES["io1"].max_throughput_mibps
    )


def io2_max_throughput_mibps(iops: float) -> float:
    """Return io2 Block Express max MiB/s: 0.256 MiB/s per IOPS up to 4,000 (docs/reference/ebs-volume-types.md#limits-per-volume-type)."""
    return min(iops * IO2_MIBPS_PER_IOPS, VOLUME_TYPES["io2"].max_throughput_mibps)


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.2f}"


def _size_problems(spec: VolumeTypeSpec, size_gib: float) -> list[str]:
    problems: list[str] = []
    if not float(size_gib).is_integer():
        problems.append(f"{spec.name} size must be a whole number of GiB, got {size_gib}")
    if not spec.min_size_gib <= size_gib <= spec.max_size_gib:
        problems.append(
            f"{spec.name} size must be {_fmt(spec.min_size_gib)}-{_fmt(spec.max_size_gib)} GiB, "
            f"got {_fmt(size_gib)}"
        )
    return problems


def _provisioned_iops_problems(spec: VolumeTypeSpec, size_gib: float, iops: int) -> list[str]:
    problems: list[str] = []
    if not spec.min_iops <= iops <= spec.max_iops:
        problems.append(
            f"{spec.name} IOPS must be {_fmt(spec.min_iops)}-{_fmt(spec.max_iops)}, got {_fmt(iops)}"
        )
    if spec.max_iops_per_gib is not None and size_gib > 0:
        # gp3's 3,000 included IOPS are available at any size; the ratio caps what is provisioned above that.
        ratio_cap = spec.max_iops_per_gib * size_gib
        floor = spec.min_iops if spec.name == "gp3" else 0
        if iops > max(ratio_cap, floor):
            problems.append(
                f"{spec.name} allows at most {_fmt(spec.max_iops_per_gib)} IOPS per GiB: "
                f"{_fmt(size_gib)} GiB allows {_fmt(max(ratio_cap, floor))} IOPS, got {_fmt(iops)}"
            )
    return problems


def volume_limits(
    volume_type: str,
    size_gib: float,
    iops: int | None = None,
    throughput_mibps: float | None = None,
    *,
    region: str = "us-east-1",
) -> VolumeLimits:
    """Return a volume's limits and monthly cost; out-of-range settings give valid=False with problems."""
    spec = volume_type_spec(volume_type)
    problems = _size_problems(spec, size_gib)
    notes: list[str] = []
    provisioned_iops: int | None = None
    provisioned_tput: float | None = None
    burst_iops: float | None = None
    burst_tput: float | None = None
    size = float(size_gib)

    if spec.name == "gp2":
        baseline_iops = gp2_baseline_iops(size)
        # DescribeVolumes reports gp2 `Iops` as the baseline; accept that value, refuse any other.
        if iops is not None and iops != baseline_iops:
            problems.append(
                f"gp2 IOPS are not provisioned (3 IOPS/GiB = {_fmt(baseline_iops)}), got {_fmt(iops)}"
            )
        if gp2_bursts(size):
            burst_iops = float(GP2_BURST_IOPS)
        baseline_tput, burst_tput = gp2_throughput_mibps(size)
    elif spec.name == "gp3":
        provisioned_iops = GP3_DEFAULT_IOPS if iops is None else iops
        provisioned_tput = (
            GP3_DEFAULT_THROUGHPUT_MIBPS if throughput_mibps is None else float(throughput_mibps)
        )
        problems += _provisioned_iops_problems(spec, size, provisioned_iops)
        if not spec.min_throughput_mibps <= provisioned_tput <= spec.max_throughput_mibps:
            problems.append(
                f"gp3 throughput must be {_fmt(spec.min_throughput_mibps)}-{_fmt(spec.max_throughput_mibps)} "
                f"MiB/s, got {_fmt(provisioned_tput)}"
            )
        if provisioned_tput > provisioned_iops * GP3_MAX_MIBPS_PER_IOPS:
            problems.append(
                f"gp3 allows at most 0.25 MiB/s per provisioned IOPS: {_fmt(provisioned_iops)} IOPS allow "
                f"{_fmt(provisioned_iops * GP3_MAX_MIBPS_PER_IOPS)} MiB/s, got {_fmt(provisioned_tput)}"
            )
        baseline_iops = float(provisioned_iops)
        baseline_tput = provisioned_tput
    elif spec.name in ("io1", "io2"):
        if iops is None:
            problems.append(
                f"{spec.name} needs provisioned IOPS ({_fmt(spec.min_iops)}-{_fmt(spec.max_iops)})"
            )
            baseline_iops = 0.0
        else:
            provisioned_iops = iops
            problems += _provisioned_iops_problems(spec, size, iops)
            baseline_iops = float(iops)
        baseline_tput = (
            io1_max_throughput_mibps(baseline_iops)
            if spec.name == "io1"
            else io2_max_throughput_mibps(baseline_iops)
        )
        if spec.name == "io1" and baseline_iops > IO1_LOW_IOPS_LIMIT:
            notes.append("io1 above 32,000 IOPS is only achieved on Nitro instances (AWS Provisioned IOPS SSD volumes)")
        if spec.name == "io2" and baseline_iops > 64_000:
            notes.append("io2 above 64,000 IOPS needs a Nitro instance; others achieve up to 32,000 (AWS Provisioned IOPS SSD volumes)")
    else:  # st1, sc1
        baseline_iops = float(spec.max_iops)
        if iops is not None:
            problems.append(f"{spec.name} IOPS are not provisioned (cap {_fmt(spec.max_iops)} at 1 MiB I/O)")
        baseline_tput, hdd_burst = hdd_throughput_mibps(spec, size)
        burst_tput = hdd_burst if hdd_burst > baseline_tput else None

    if throughput_mibps is not None and not spec.provisioned_throughput:
        problems.append(f"{spec.name} throughput is not provisioned (only gp3 takes a throughput setting)")

    bursts = burst_iops is not None or burst_tput is not None
    max_tput = burst_tput if burst_tput is not None else baseline_tput
    cost = ebs_monthly_cost(spec.name, size, provisioned_iops, provisioned_tput, region=region)
    if cost.price_region != region:
        notes.append(f"no EBS prices for {region}; {cost.price_region} prices used")
    return VolumeLimits(
        volume_type=spec.name,
        size_gib=size,
        provisioned_iops=provisioned_iops,
        provisioned_throughput_mibps=provisioned_tput,
        baseline_iops=baseline_iops,
        burst_iops=burst_iops,
        baseline_throughput_mibps=baseline_tput,
        burst_throughput_mibps=burst_tput,
        max_throughput_mibps=max_tput,
        io_chunk_kib=spec.io_chunk_kib,
        media=spec.media,
        bursts=bursts,
        valid=not problems,
        problems=tuple(problems),
        notes=tuple(notes),
        monthly_cost_usd=cost.total_usd,
        cost_breakdown=cost,
        source=spec.source,
    )
