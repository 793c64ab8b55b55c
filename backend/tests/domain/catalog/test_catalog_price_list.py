"""Instance prices: the built-in table, and the refresh through the AWS Price List API (pricing:GetProducts).

The built-in prices are us-east-1 on-demand Linux, as the Price List API returned them on 2026-01-19 (recorded
in aws/karpenter-provider-aws pkg/providers/pricing/zz_generated.pricing_aws.go, "generated at
2026-01-19T13:23:24Z for us-east-1"; the data file's `sources.hourly_price_usd` cites it). moto implements no
`pricing` service, so the refresh is tested with the real boto3 client against `price_list_server`, a loopback
server that answers as the API documents (JSON 1.1, PriceList entries as JSON strings, NextToken), and EC2
DescribeInstanceTypes from the moto server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from headroom.domain.catalog.instance_types import (
    BUILTIN_PRICE_REGION,
    instance_limits,
    list_instance_types,
    load_catalog,
    use_override_file,
)
from headroom.domain.catalog.price_list import get_products_filters, on_demand_prices
from headroom.sources.aws.instance_catalog import fetch_price_list, refresh_instance_catalog
from price_list_server import PriceListServer, product, serve

NOW = datetime(2026, 11, 23, tzinfo=UTC)
TYPES = ["m5.2xlarge", "m6i.4xlarge", "r5b.large", "m7g.4xlarge"]


@pytest.fixture(autouse=True)
def _no_catalog_override_left() -> Iterator[None]:
    yield
    use_override_file(None)


@pytest.fixture(autouse=True)
def _dummy_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")


# --- the built-in table


@pytest.mark.parametrize(
    ("name", "hourly"),
    [
        # Values the issue found null, as the Price List API gave them for us-east-1 on 2026-01-19.
        ("m6i.4xlarge", 0.768),
        ("m6i.16xlarge", 3.072),
        ("r6i.large", 0.126),
        ("r6i.16xlarge", 4.032),
        ("m7i.large", 0.1008),
        ("m7i.16xlarge", 3.2256),
        ("r5b.large", 0.149),
        ("r5b.16xlarge", 4.768),
        ("m6g.4xlarge", 0.616),
        ("m7g.16xlarge", 2.6112),
        ("i3.4xlarge", 1.248),
        ("i3.16xlarge", 4.992),
        ("c5.12xlarge", 2.04),
        ("m5d.large", 0.113),
        # Prices the table had before (third-party copies of the AWS page) are the same.
        ("m5.2xlarge", 0.384),
        ("m7g.large", 0.0816),
    ],
)
def test_builtin_prices(name: str, hourly: float) -> None:
    inst = instance_limits(name)
    assert inst.hourly_price_usd == pytest.approx(hourly)
    # monthly = hourly x 730 h (AWS Pricing Calculator): m6i.4xlarge 0.768 x 730 = $560.64
    assert inst.monthly_price_usd == pytest.approx(hourly * 730)
    assert inst.price_region == BUILTIN_PRICE_REGION == "us-east-1"
    assert inst.price_source is not None and "https://aws.amazon.com/ec2/pricing/on-demand/" in inst.price_source
    assert "2026-01-19" in inst.price_source


def test_every_builtin_type_has_a_price_and_an_architecture() -> None:
    catalog = load_catalog("")
    missing = [i.name for i in catalog.by_name.values() if i.hourly_price_usd is None or i.architecture is None]
    assert missing == []
    # Graviton families are arm64 (DescribeInstanceTypes ProcessorInfo.SupportedArchitectures), the rest x86_64.
    arm = sorted({i.family for i in catalog.by_name.values() if i.architecture == "arm64"})
    assert arm == ["m6g", "m7g"]


def test_prices_are_linear_in_size_within_a_family() -> None:
    # AWS prices the sizes of one family in proportion to their vCPUs: m5 $0.048 per vCPU-hour from
    # m5.large (2 vCPU, $0.096) to m5.16xlarge (64 vCPU, $3.072).
    by_family: dict[str, set[float]] = {}
    for inst in list_instance_types():
        assert inst.vcpus and inst.hourly_price_usd
        by_family.setdefault(inst.family, set()).add(round(inst.hourly_price_usd / inst.vcpus, 6))
    assert {f: len(v) for f, v in by_family.items() if len(v) != 1} == {}
    assert by_family["m5"] == {0.048} and by_family["m7g"] == {0.0408} and by_family["r5b"] == {0.0745}


# --- reading Price List answers


def test_on_demand_prices_keep_only_linux_shared_on_demand_in_the_region() -> None:
    entries = [
        json.dumps(product("m5.2xlarge", "0.3840000000")),
        json.dumps(product("m5.2xlarge", "0.7520000000", operating_system="Windows")),
        json.dumps(product("m5.2xlarge", "0.4220000000", tenancy="Dedicated")),
        json.dumps(product("m5.2xlarge", "0.3840000000", capacity_status="UnusedCapacityReservation")),
        json.dumps(product("m5.2xlarge", "0.9990000000", pre_installed_sw="SQL Std")),
        json.dumps(product("m5.2xlarge", "0.5000000000", region="eu-west-1")),
        json.dumps(product("m6i.large", "0.0000000000")),  # a zero rate is not a price
        "{not json",
    ]
    assert on_demand_prices(entries, region="us-east-1") == {"m5.2xlarge": 0.384}


def test_filters_ask_for_the_region_linux_shared_on_demand() -> None:
    fields = {f["Field"]: f["Value"] for f in get_products_filters("eu-west-1")}
    assert fields == {
        "regionCode": "eu-west-1",
        "productFamily": "Compute Instance",
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "preInstalledSw": "NA",
        "capacitystatus": "Used",
    }
    assert all(f["Type"] == "TERM_MATCH" for f in get_products_filters("eu-west-1"))


# --- the refresh, against the stand-in


def _server(**kwargs: object) -> PriceListServer:
    products = [
        product("m5.2xlarge", "0.3840000000"),
        product("m6i.4xlarge", "0.7680000000"),
        product("r5b.large", "0.1490000000"),
        product("m7g.4xlarge", "0.6528000000"),
        product("m5.2xlarge", "0.7520000000", operating_system="Windows"),
        # Not a real eu-west-1 price: a different number, to see that the asked region's price is the one kept.
        product("m5.2xlarge", "0.4280000000", region="eu-west-1"),
    ]
    return PriceListServer(products=products, **kwargs)  # type: ignore[arg-type]


def test_fetch_price_list_follows_next_token_with_the_json_protocol() -> None:
    with serve(_server()) as server:
        entries = fetch_price_list(region="us-east-1", endpoint_url=server.url, page_size=2)
    # 4 Linux us-east-1 products at 2 a page: 2 requests, each the GetProducts target with the filters.
    assert sorted(json.loads(e)["product"]["attributes"]["instanceType"] for e in entries) == sorted(TYPES)
    assert [t for t, _ in server.requests] == ["AWSPriceListService.GetProducts"] * 2
    first, second = (body for _, body in server.requests)
    assert first["ServiceCode"] == "AmazonEC2" and first["MaxResults"] == 2 and "NextToken" not in first
    assert second["NextToken"] == "2"


def test_refresh_reads_prices_for_the_region(aws_endpoint_url: str, tmp_path: Path) -> None:
    out = tmp_path / "instances.json"
    with serve(_server()) as server:
        result = refresh_instance_catalog(
            out,
            region="us-east-1",
            endpoint_url=aws_endpoint_url,
            instance_types=TYPES,
            now=NOW,
            pricing_endpoint_url=server.url,
        )
    assert (result.instance_types, result.priced) == (4, 4)
    assert "Price List" in result.prices_note and "2026-11-23" in result.prices_note
    doc = json.loads(out.read_text())
    assert doc["sources"]["hourly_price_usd"] == result.prices_note
    use_override_file(str(out))
    m7g = instance_limits("m7g.4xlarge")
    # 0.6528 $/h x 730 h = $476.544 a month, us-east-1, from the API (not the built-in table)
    assert (m7g.hourly_price_usd, m7g.price_region) == (0.6528, "us-east-1")
    assert m7g.monthly_price_usd == pytest.approx(476.544)
    assert m7g.price_source == result.prices_note
    assert m7g.architecture == "arm64"  # ProcessorInfo.SupportedArchitectures as moto serves it


def test_refresh_for_another_region_keeps_that_regions_price(aws_endpoint_url: str, tmp_path: Path) -> None:
    out = tmp_path / "instances.json"
    with serve(_server()) as server:
        result = refresh_instance_catalog(
            out,
            region="eu-west-1",
            endpoint_url=aws_endpoint_url,
            instance_types=["m5.2xlarge"],
            now=NOW,
            pricing_endpoint_url=server.url,
        )
    assert result.priced == 1
    assert {"Field": "regionCode", "Type": "TERM_MATCH", "Value": "eu-west-1"} in server.requests[0][1]["Filters"]
    use_override_file(str(out))
    m5 = instance_limits("m5.2xlarge")
    assert (m5.hourly_price_usd, m5.price_region, m5.price_label) == (0.428, "eu-west-1", "eu-west-1 on-demand")


def test_refresh_denied_keeps_the_builtin_prices_and_says_why(aws_endpoint_url: str, tmp_path: Path) -> None:
    out = tmp_path / "instances.json"
    with serve(_server(deny=True)) as server:
        result = refresh_instance_catalog(
            out,
            region="eu-west-1",
            endpoint_url=aws_endpoint_url,
            instance_types=["m6i.4xlarge"],
            now=NOW,
            pricing_endpoint_url=server.url,
        )
    assert result.priced == 0
    assert "AccessDeniedException" in result.prices_note
    assert "built-in table" in result.prices_note and "us-east-1's" in result.prices_note
    assert json.loads(out.read_text())["instance_types"][0]["hourly_price_usd"] is None
    use_override_file(str(out))
    m6i = instance_limits("m6i.4xlarge")
    # The override's EBS limits, the built-in us-east-1 price: 0.768 x 730 = $560.64 a month.
    assert m6i.source.startswith("override")
    assert (m6i.hourly_price_usd, m6i.price_region) == (0.768, "us-east-1")
    assert m6i.monthly_price_usd == pytest.approx(560.64)


def test_refresh_with_an_unreachable_price_list_falls_back(aws_endpoint_url: str, tmp_path: Path) -> None:
    result = refresh_instance_catalog(
        tmp_path / "instances.json",
        region="us-east-1",
        endpoint_url=aws_endpoint_url,
        instance_types=["m5.2xlarge"],
        now=NOW,
        pricing_endpoint_url="http://127.0.0.1:9",
    )
    assert result.priced == 0 and "could not be reached" in result.prices_note
