"""EC2 instance types: EBS-optimized limits (bandwidth, throughput, IOPS, burst), vCPUs, memory and price.

Built-in data: `data/instance_types.json` (its `sources` block cites the AWS documents and the price data). Entries
from a JSON override file named by the environment variable HEADROOM_INSTANCE_CATALOG (written by `headroom
catalog refresh-instances`) win over the built-in ones; the built-in data stays the fallback.

Units (AWS "Amazon EBS-optimized instances"): bandwidth in Mbps (megabits), throughput in MB/s (decimal megabytes = Mbps / 8, as
AWS quotes it) and, for comparing with volumes, MiB/s. IOPS are AWS's 16 KiB-I/O figures.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from headroom.domain.catalog.errors import CatalogError, UnknownInstanceType
from headroom.domain.catalog.prices import DEFAULT_REGION, HOURS_PER_MONTH
from headroom.domain.references import EBS_OPTIMIZED, EC2_PRICING
from headroom.domain.units import mb_to_mib, mbps_to_mb_per_s

OVERRIDE_ENV = "HEADROOM_INSTANCE_CATALOG"
BUILTIN_PATH = Path(__file__).parent / "data" / "instance_types.json"
BUILTIN_SOURCE = EBS_OPTIMIZED.cite()
# The built-in prices: us-east-1 on-demand Linux, as AWS's Price List API gave them on this date (the data
# file's `sources.hourly_price_usd` says where they were recorded).
BUILTIN_PRICE_REGION = DEFAULT_REGION
BUILTIN_PRICES_AS_OF = "2026-01-19"
BUILTIN_PRICE_SOURCE = f"{EC2_PRICING.cite()}, {BUILTIN_PRICE_REGION}, Linux, as of {BUILTIN_PRICES_AS_OF}"
ARCHITECTURES = ("x86_64", "arm64")

# docs/reference/ec2-ebs-limits.md#the-burst-rule: asterisk sizes "can support maximum performance for 30 minutes at least once every 24 hours".
INSTANCE_BURST_SECONDS = 30 * 60
INSTANCE_BURST_PERIOD_SECONDS = 24 * 3600


@dataclass(frozen=True)
class InstanceLimits:
    """EBS-optimized limits of one instance type.

    *_bandwidth_mbps are megabits per second; *_throughput_mbps are decimal megabytes per second (Mbps / 8);
    *_throughput_mibps the same in MiB/s. `bursts` means baseline < maximum: the maximum holds for
    `burst_seconds` (30 min) at least once every 24 h, then the baseline (docs/reference/ec2-ebs-limits.md#the-burst-rule).
    """

    name: str
    family: str
    size: str
    vcpus: int | None
    memory_gib: float | None
    baseline_bandwidth_mbps: float
    max_bandwidth_mbps: float
    baseline_throughput_mbps: float
    max_throughput_mbps: float
    baseline_throughput_mibps: float
    max_throughput_mibps: float
    baseline_iops: float
    max_iops: float
    bursts: bool
    burst_seconds: int | None
    hourly_price_usd: float | None
    monthly_price_usd: float | None
    source: str
    architecture: str | None = None  # x86_64 or arm64 (DescribeInstanceTypes ProcessorInfo)
    price_region: str | None = None  # the region the price is for (None: no price)
    price_source: str | None = None  # where the price comes from, with its date

    @property
    def price_label(self) -> str:
        """Return e.g. `us-east-1 on-demand`: what a price of this type is (region and term)."""
        return f"{self.price_region or DEFAULT_REGION} on-demand"

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return asdict(self)


def split_instance_name(name: str) -> tuple[str, str]:
    """Split 'm5.2xlarge' into ('m5', '2xlarge')."""
    family, sep, size = name.partition(".")
    if not sep or not family or not size:
        raise UnknownInstanceType(
            f"not an instance type name: {name!r} (expected family.size, e.g. m5.2xlarge)"
        )
    return family, size


def instance_limits_from_entry(entry: Mapping[str, Any], source: str) -> InstanceLimits:
    """Build InstanceLimits from one catalog entry (the JSON shape of data/instance_types.json)."""
    try:
        name = str(entry["name"])
        base_bw = float(entry["baseline_bandwidth_mbps"])
        max_bw = float(entry["max_bandwidth_mbps"])
        base_iops = float(entry["baseline_iops"])
        max_iops = float(entry["max_iops"])
    except (KeyError, TypeError, ValueError) as exc:
        raise CatalogError(f"bad instance catalog entry {dict(entry)!r}: {exc}") from exc
    family, size = split_instance_name(name)
    base_mb, max_mb = mbps_to_mb_per_s(base_bw), mbps_to_mb_per_s(max_bw)
    bursts = base_bw < max_bw or base_iops < max_iops  # docs/reference/ec2-ebs-limits.md#describeinstancetypes: no API flag; baseline < maximum means burst
    hourly = entry.get("hourly_price_usd")
    hourly_f = float(hourly) if hourly is not None else None
    architecture = entry.get("architecture")
    if architecture is not None and architecture not in ARCHITECTURES:
        raise CatalogError(f"bad architecture {architecture!r} for {name} (expected one of {ARCHITECTURES})")
    vcpus = entry.get("vcpus")
    memory = entry.get("memory_gib")
    return InstanceLimits(
        name=name,
        family=family,
        size=size,
        vcpus=int(vcpus) if vcpus is not None else None,
        memory_gib=float(memory) if memory is not None else None,
        baseline_bandwidth_mbps=base_bw,
        max_bandwidth_mbps=max_bw,
        baseline_throughput_mbps=base_mb,
        max_throughput_mbps=max_mb,
        baseline_throughput_mibps=mb_to_mib(base_mb),
        max_throughput_mibps=mb_to_mib(max_mb),
        baseline_iops=base_iops,
        max_iops=max_iops,
        bursts=bursts,
        burst_seconds=INSTANCE_BURST_SECONDS if bursts else None,
        hourly_price_usd=hourly_f,
        monthly_price_usd=hourly_f * HOURS_PER_MONTH if hourly_f is not None else None,
        source=str(entry.get("source") or source),
        architecture=str(architecture) if architecture is not None else None,
        price_region=str(entry.get("price_region") or BUILTIN_PRICE_REGION) if hourly_f is not None else None,
        price_source=str(entry.get("price_source") or BUILTIN_PRICE_SOURCE) if hourly_f is not None else None,
    )


def entries_from_describe_instance_types(pages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Turn DescribeInstanceTypes response pages into catalog entries (skip types without EBS info).

    Reads InstanceTypes[].EbsInfo.EbsOptimizedInfo, VCpuInfo.DefaultVCpus, MemoryInfo.SizeInMiB and
    ProcessorInfo.SupportedArchitectures (arm64 when it lists arm64, else x86_64). Prices are not in that API
    and stay null (`apply_prices` adds them from the Price List API).
    """
    entries: dict[str, dict[str, Any]] = {}
    for page in pages:
        for it in page.get("InstanceTypes", []):
            info = (it.get("EbsInfo") or {}).get("EbsOptimizedInfo")
            name = it.get("InstanceType")
            if not info or not name:
                continue
            memory_mib = (it.get("MemoryInfo") or {}).get("SizeInMiB")
            archs = (it.get("ProcessorInfo") or {}).get("SupportedArchitectures") or []
            entries[name] = {
                "name": name,
                "vcpus": (it.get("VCpuInfo") or {}).get("DefaultVCpus"),
                "memory_gib": memory_mib / 1024 if memory_mib is not None else None,
                **({"architecture": "arm64" if "arm64" in archs else "x86_64"} if archs else {}),
                "baseline_bandwidth_mbps": info["BaselineBandwidthInMbps"],
                "max_bandwidth_mbps": info["MaximumBandwidthInMbps"],
                "baseline_iops": info["BaselineIops"],
                "max_iops": info["MaximumIops"],
                "hourly_price_usd": None,
            }
    return [entries[k] for k in sorted(entries)]


def apply_prices(
    entries: list[dict[str, Any]], prices: Mapping[str, float], *, region: str, price_source: str
) -> list[dict[str, Any]]:
    """Return the entries with the hourly prices found (and their region and source); others stay null."""
    out = []
    for entry in entries:
        price = prices.get(entry["name"])
        if price is None:
            out.append(dict(entry))
        else:
            out.append({**entry, "hourly_price_usd": price, "price_region": region, "price_source": price_source})
    return out


def catalog_document(
    entries: list[dict[str, Any]], *, source: str, generated_at: str, prices: str | None = None
) -> dict[str, Any]:
    """Wrap entries in the catalog file shape (a `sources` block, then `instance_types`)."""
    sources = {"ebs": source, "generated_at": generated_at}
    if prices is not None:
        sources["hourly_price_usd"] = prices
    return {"sources": sources, "instance_types": entries}


@dataclass(frozen=True)
class InstanceCatalog:
    """Instance limits by name, built from the built-in data and an optional override document."""

    by_name: Mapping[str, InstanceLimits]

    def get(self, name: str) -> InstanceLimits:
        limits = self.by_name.get(name.strip().lower())
        if limits is None:
            raise UnknownInstanceType(
                f"unknown instance type {name!r}: not in the built-in catalog nor in the "
                f"override file (${OVERRIDE_ENV}); run `headroom catalog refresh-instances`"
            )
        return limits


def build_catalog(builtin: Mapping[str, Any], override: Mapping[str, Any] | None = None) -> InstanceCatalog:
    """Merge catalog documents: override entries win; a null override price keeps the built-in price (and
    its region and source); a null override architecture keeps the built-in one."""
    merged: dict[str, InstanceLimits] = {}
    builtin_entries = {e["name"]: e for e in builtin.get("instance_types", [])}
    for name, entry in builtin_entries.items():
        merged[name] = instance_limits_from_entry(entry, BUILTIN_SOURCE)
    if override is not None:
        override_source = "override: " + str(
            (override.get("sources") or {}).get("ebs", "EC2 DescribeInstanceTypes")
        )
        for entry in override.get("instance_types", []):
            entry = dict(entry)
            base = builtin_entries.get(entry.get("name", ""))
            if entry.get("hourly_price_usd") is None and base is not None:
                entry["hourly_price_usd"] = base.get("hourly_price_usd")
                entry.pop("price_region", None)
                entry.pop("price_source", None)
            if entry.get("architecture") is None and base is not None:
                entry["architecture"] = base.get("architecture")
            merged[entry["name"]] = instance_limits_from_entry(entry, override_source)
    return InstanceCatalog(by_name=merged)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise CatalogError(f"cannot read instance catalog {path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("instance_types"), list):
        raise CatalogError(f"instance catalog {path} has no `instance_types` list")
    return data


@lru_cache(maxsize=8)
def _load(override_path: str | None, _mtime_ns: int | None) -> InstanceCatalog:
    override = _read_json(Path(override_path)) if override_path else None
    return build_catalog(_read_json(BUILTIN_PATH), override)


_override_file: str | None = None


def use_override_file(path: str | None) -> None:
    """Set the override file later lookups read (the shell passes Settings.instance_catalog at start-up; the
    catalog reads no environment itself)."""
    global _override_file
    _override_file = path or None


def load_catalog(override_path: str | None = None) -> InstanceCatalog:
    """Load the built-in catalog plus the override file (default: the one `use_override_file` set)."""
    path = override_path if override_path is not None else _override_file
    mtime = None
    if path:
        try:
            mtime = Path(path).stat().st_mtime_ns
        except OSError as exc:
            raise CatalogError(f"cannot read instance catalog {path}: {exc}") from exc
    return _load(path, mtime)


def instance_limits(name: str) -> InstanceLimits:
    """Return the EBS limits of an instance type (UnknownInstanceType when unknown)."""
    return load_catalog().get(name)


def list_instance_types(family: str | None = None) -> list[InstanceLimits]:
    """Return known instance types, optionally of one family, ordered by family then size."""
    items = list(load_catalog().by_name.values())
    if family is not None:
        items = [i for i in items if i.family == family.strip().lower()]
    return sorted(items, key=lambda i: (i.family, i.vcpus or 0, i.max_iops, i.name))
