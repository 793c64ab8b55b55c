"""Instance EBS limits. Expected numbers from docs/reference/ec2-ebs-limits.md#the-burst-rule, docs/reference/ec2-ebs-limits.md#limits-table (AWS "Amazon EBS-optimized instances" and "Amazon EBS-optimized instance types", 2024)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from headroom.domain.catalog import (
    CatalogError,
    InstanceLimits,
    UnknownInstanceType,
    instance_limits,
    list_instance_types,
)
from headroom.domain.catalog.instance_types import (
    build_catalog,
    entries_from_describe_instance_types,
    load_catalog,
    use_override_file,
)

# name -> (baseline Mbps, max Mbps, baseline MB/s, max MB/s, baseline IOPS, max IOPS, bursts), docs/reference/ec2-ebs-limits.md#limits-table rows.
SECTION_2_2 = {
    "m5.large": (650, 4750, 81.25, 593.75, 3600, 18750, True),
    "m5.2xlarge": (2300, 4750, 287.5, 593.75, 12000, 18750, True),
    "m5.4xlarge": (4750, 4750, 593.75, 593.75, 18750, 18750, False),
    "m5d.xlarge": (1150, 4750, 143.75, 593.75, 6000, 18750, True),
    "m5d.16xlarge": (13600, 13600, 1700, 1700, 60000, 60000, False),
    "m6i.4xlarge": (5000, 10000, 625, 1250, 20000, 40000, True),
    "m6i.12xlarge": (15000, 15000, 1875, 1875, 60000, 60000, False),
    "m7i.large": (650, 10000, 81.25, 1250, 3600, 40000, True),  # "identical to m6i"
    "m7i.16xlarge": (20000, 20000, 2500, 2500, 80000, 80000, False),
    "r6i.2xlarge": (2500, 10000, 312.5, 1250, 12000, 40000, True),  # "identical to m6i"
    "r5.2xlarge": (2300, 4750, 287.5, 593.75, 12000, 18750, True),  # "identical to m5"
    "r5.8xlarge": (6800, 6800, 850, 850, 30000, 30000, False),
    "r5b.large": (1250, 10000, 156.25, 1250, 5417, 43333, True),
    "r5b.16xlarge": (40000, 40000, 5000, 5000, 173333, 173333, False),
    "c5.large": (650, 4750, 81.25, 593.75, 4000, 20000, True),
    "c5.9xlarge": (9500, 9500, 1187.5, 1187.5, 40000, 40000, False),
    "c5.12xlarge": (9500, 9500, 1187.5, 1187.5, 40000, 40000, False),
    "i3.large": (425, 425, 53.125, 53.125, 3000, 3000, False),
    "i3.16xlarge": (14000, 14000, 1750, 1750, 65000, 65000, False),
    "m6g.2xlarge": (2375, 4750, 296.875, 593.75, 12000, 20000, True),
    "m6g.12xlarge": (14250, 14250, 1781.25, 1781.25, 50000, 50000, False),
    "m7g.large": (630, 10000, 78.75, 1250, 3600, 40000, True),
    "m7g.4xlarge": (5000, 10000, 625, 1250, 20000, 40000, True),  # "* for up to 4xlarge"
    "m7g.8xlarge": (10000, 10000, 1250, 1250, 40000, 40000, False),
}

@pytest.fixture(autouse=True)
def _no_catalog_override_left() -> Iterator[None]:
    """The catalog's override file is process configuration: every test leaves it unset."""
    yield
    use_override_file(None)



@pytest.mark.parametrize(("name", "row"), sorted(SECTION_2_2.items()))
def test_instance_limits_match_section_2_2(name: str, row: tuple[float, ...]) -> None:
    base_bw, max_bw, base_mb, max_mb, base_iops, max_iops, bursts = row
    limits = instance_limits(name)
    assert (limits.baseline_bandwidth_mbps, limits.max_bandwidth_mbps) == (base_bw, max_bw)
    assert limits.baseline_throughput_mbps == pytest.approx(base_mb)
    assert limits.max_throughput_mbps == pytest.approx(max_mb)
    assert (limits.baseline_iops, limits.max_iops) == (base_iops, max_iops)
    assert limits.bursts is bursts
    # docs/reference/ec2-ebs-limits.md#the-burst-rule: asterisk sizes hold the maximum for 30 minutes.
    assert limits.burst_seconds == (1800 if bursts else None)
    # docs/reference/ec2-ebs-limits.md#units: MB/s are decimal; MiB/s = MB/s × 10^6 / 2^20.
    assert limits.max_throughput_mibps == pytest.approx(max_mb * 1e6 / 2**20)


def test_m5_2xlarge_brief_example() -> None:
    # docs/reference/ec2-ebs-limits.md#limits-table: m5.2xlarge 287.5 MB/s baseline, 593.75 max, 12,000 / 18,750 IOPS; 593.75 MB/s ≈ 566 MiB/s (docs/reference/ec2-ebs-limits.md#units).
    m = instance_limits("m5.2xlarge")
    assert (m.baseline_throughput_mbps, m.max_throughput_mbps) == (287.5, 593.75)
    assert (m.baseline_iops, m.max_iops) == (12000, 18750)
    assert round(m.max_throughput_mibps) == 566
    assert (m.family, m.size, m.vcpus, m.memory_gib) == ("m5", "2xlarge", 8, 32.0)


FAMILY_SIZES = {
    # docs/reference/ec2-ebs-limits.md#limits-table lists large..16xlarge for these; c5 has 9xlarge/12xlarge (no 8x/16x), i3 no 12xlarge.
    "m5": 7,
    "m5d": 7,
    "m6i": 7,
    "m7i": 7,
    "r5": 7,
    "r5b": 7,
    "r6i": 7,
    "m6g": 7,
    "m7g": 7,
    "c5": 6,
    "i3": 6,
}


@pytest.mark.parametrize(("family", "count"), sorted(FAMILY_SIZES.items()))
def test_families_have_every_listed_size(family: str, count: int) -> None:
    items = list_instance_types(family)
    assert len(items) == count
    assert all(i.family == family for i in items)
    # ordered by size: IOPS never decrease
    assert [i.max_iops for i in items] == sorted(i.max_iops for i in items)


def test_monthly_price_is_730_hours() -> None:
    m = instance_limits("m5.2xlarge")
    assert m.hourly_price_usd is not None and m.monthly_price_usd is not None
    assert m.monthly_price_usd == pytest.approx(m.hourly_price_usd * 730)


def test_unknown_price_is_null() -> None:
    # Every built-in type has a cited price (r5b.large was the example of a null one). A type
    # only the override file knows, without a price, still gets null rather than an invented one.
    r = build_catalog({"instance_types": []}, _override_doc()).get("x9.large")
    assert r.hourly_price_usd is None and r.monthly_price_usd is None
    assert r.price_region is None and r.price_source is None


@pytest.mark.parametrize("name", ["m5.metal", "x9.large", "m5", ""])
def test_unknown_instance_type(name: str) -> None:
    with pytest.raises(UnknownInstanceType):
        instance_limits(name)
    assert issubclass(UnknownInstanceType, CatalogError)


def test_builtin_data_cites_sources() -> None:
    data = json.loads((Path(__file__).parents[3] / "headroom/domain/catalog/data/instance_types.json").read_text())
    assert {"ebs", "throughput", "bursts", "vcpus_memory", "hourly_price_usd"} <= set(data["sources"])
    assert any("c5" in note for note in data["notes"])


PAGE = {
    # Shape of DescribeInstanceTypes (docs/reference/ec2-ebs-limits.md#describeinstancetypes, API_EbsOptimizedInfo).
    "InstanceTypes": [
        {
            "InstanceType": "m5.2xlarge",
            "VCpuInfo": {"DefaultVCpus": 8},
            "MemoryInfo": {"SizeInMiB": 32768},
            "EbsInfo": {
                "EbsOptimizedSupport": "default",
                "EbsOptimizedInfo": {
                    "BaselineBandwidthInMbps": 2300,
                    "BaselineThroughputInMBps": 287.5,
                    "BaselineIops": 12000,
                    "MaximumBandwidthInMbps": 4750,
                    "MaximumThroughputInMBps": 593.75,
                    "MaximumIops": 18750,
                },
            },
        },
        {"InstanceType": "t1.micro", "EbsInfo": {"EbsOptimizedSupport": "unsupported"}},
    ]
}


def test_entries_from_describe_instance_types() -> None:
    entries = entries_from_describe_instance_types([PAGE, {"InstanceTypes": []}])
    assert entries == [
        {
            "name": "m5.2xlarge",
            "vcpus": 8,
            "memory_gib": 32.0,
            "baseline_bandwidth_mbps": 2300,
            "max_bandwidth_mbps": 4750,
            "baseline_iops": 12000,
            "max_iops": 18750,
            "hourly_price_usd": None,
        }
    ]


def _override_doc() -> dict[str, object]:
    return {
        "sources": {"ebs": "test override"},
        "instance_types": [
            # m5.2xlarge with made-up larger limits: the override must win.
            {
                "name": "m5.2xlarge",
                "baseline_bandwidth_mbps": 4000,
                "max_bandwidth_mbps": 8000,
                "baseline_iops": 15000,
                "max_iops": 30000,
                "hourly_price_usd": None,
            },
            {
                "name": "x9.large",
                "baseline_bandwidth_mbps": 800,
                "max_bandwidth_mbps": 800,
                "baseline_iops": 4000,
                "max_iops": 4000,
                "vcpus": 2,
                "memory_gib": 8,
            },
        ],
    }


def test_override_file_from_env_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "override.json"
    path.write_text(json.dumps(_override_doc()))
    use_override_file(str(path))  # what the shell does with Settings.instance_catalog
    m = instance_limits("m5.2xlarge")
    assert (m.baseline_iops, m.max_iops, m.max_throughput_mbps) == (15000, 30000, 1000.0)
    assert m.source.startswith("override")
    assert m.hourly_price_usd == 0.384  # built-in price kept when the override has none
    assert instance_limits("x9.large").bursts is False
    # the built-in data stays the fallback for everything else
    assert instance_limits("m5.large").baseline_iops == 3600
    use_override_file(None)
    assert instance_limits("m5.2xlarge").max_iops == 18750
    with pytest.raises(UnknownInstanceType):
        instance_limits("x9.large")


def test_override_file_missing_or_bad(tmp_path: Path) -> None:
    with pytest.raises(CatalogError):
        load_catalog(str(tmp_path / "nope.json"))
    bad = tmp_path / "bad.json"
    bad.write_text('{"no": "entries"}')
    with pytest.raises(CatalogError):
        load_catalog(str(bad))


def test_build_catalog_pure() -> None:
    catalog = build_catalog({"instance_types": []}, _override_doc())
    assert sorted(catalog.by_name) == ["m5.2xlarge", "x9.large"]
    assert isinstance(catalog.get("X9.LARGE"), InstanceLimits)
