"""Refresh the instance catalog from EC2 DescribeInstanceTypes against the moto server (docs/reference/ec2-ebs-limits.md#describeinstancetypes)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import boto3
import pytest
from botocore.stub import Stubber
from headroom.domain.catalog.instance_types import (
    entries_from_describe_instance_types,
    instance_limits,
    load_catalog,
    use_override_file,
)
from headroom.domain.catalog.resolve import DescribedType, described_source, resolve_instance_limits
from headroom.sources.aws.instance_catalog import fetch_instance_type_pages, refresh_instance_catalog

TYPES = ["m5.2xlarge", "m6i.4xlarge", "r5b.large", "i3.large", "m7g.large"]

@pytest.fixture(autouse=True)
def _no_catalog_override_left() -> Iterator[None]:
    """The catalog's override file is process configuration: every test leaves it unset."""
    yield
    use_override_file(None)



def test_fetch_pages_reads_every_type(aws_endpoint_url: str) -> None:
    pages = fetch_instance_type_pages(region="us-east-1", endpoint_url=aws_endpoint_url, page_size=100)
    names = [t["InstanceType"] for p in pages for t in p["InstanceTypes"]]
    assert len(names) == len(set(names))
    assert set(TYPES) <= set(names)
    assert len(names) > 500  # the whole region's list, not one page of it


def test_fetch_pages_follows_next_token() -> None:
    # The token handed back is checked with botocore's Stubber (the moto server pages, but by its own tokens).
    session = boto3.session.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name="us-east-1")
    client = session.client("ec2", region_name="us-east-1")
    stubber = Stubber(client)
    stubber.add_response(
        "describe_instance_types", {"InstanceTypes": [{"InstanceType": "m5.large"}], "NextToken": "t1"}
    )
    stubber.add_response(
        "describe_instance_types", {"InstanceTypes": [{"InstanceType": "m5.xlarge"}]}, {"NextToken": "t1"}
    )

    class _Session:
        def client(self, *_args: object, **_kwargs: object) -> object:
            return client

    with stubber:
        pages = fetch_instance_type_pages(region="us-east-1", session=_Session())
    assert [t["InstanceType"] for p in pages for t in p["InstanceTypes"]] == ["m5.large", "m5.xlarge"]
    stubber.assert_no_pending_responses()


def test_refresh_writes_override_matching_builtin(
    aws_endpoint_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "catalog" / "instances.json"
    result = refresh_instance_catalog(
        out,
        region="us-east-1",
        endpoint_url=aws_endpoint_url,
        instance_types=TYPES,
        now=datetime(2026, 1, 1, tzinfo=UTC),
        prices=False,  # prices: test_catalog_price_list.py, against a Price List API stand-in
    )
    assert result.instance_types == len(TYPES)
    doc = json.loads(out.read_text())
    assert doc["sources"]["generated_at"] == "2026-01-01T00:00:00+00:00"
    assert sorted(e["name"] for e in doc["instance_types"]) == sorted(TYPES)

    builtin = {name: load_catalog("").get(name) for name in TYPES}
    use_override_file(str(out))  # what the shell does with Settings.instance_catalog
    for name in TYPES:
        refreshed = instance_limits(name)
        assert refreshed.source.startswith("override")
        # The API (as moto serves it) agrees with docs/reference/ec2-ebs-limits.md#limits-table for these types.
        ref = builtin[name]
        assert (refreshed.baseline_iops, refreshed.max_iops) == (ref.baseline_iops, ref.max_iops)
        assert refreshed.baseline_throughput_mbps == pytest.approx(ref.baseline_throughput_mbps)
        assert refreshed.max_throughput_mbps == pytest.approx(ref.max_throughput_mbps)
        assert refreshed.bursts is ref.bursts
        assert (refreshed.vcpus, refreshed.memory_gib) == (ref.vcpus, ref.memory_gib)


def _described(endpoint: str, name: str) -> DescribedType:
    """The type's entry as the collector stores it: DescribeInstanceTypes on the moto server, read by the same
    parser the inventory sweep uses (headroom.sources.aws.ingest)."""
    pages = fetch_instance_type_pages(region="us-east-1", endpoint_url=endpoint, instance_types=[name])
    (entry,) = entries_from_describe_instance_types(pages)
    return DescribedType(entry, described_source("us-east-1", datetime(2026, 11, 1, tzinfo=UTC)))


def test_the_catalog_wins_over_a_stored_answer(aws_endpoint_url: str) -> None:
    # m5.24xlarge's answer stored for an m5.2xlarge: a stale or odd answer for a type the catalog knows is not
    # used; everybody judges by the catalog.
    got = resolve_instance_limits("m5.2xlarge", _described(aws_endpoint_url, "m5.24xlarge"))
    assert got.origin == "catalog" and got.limits == instance_limits("m5.2xlarge")
    assert got.note.startswith("AWS: Amazon EBS-optimized instances (https://docs.aws.amazon.com/")


def test_a_type_the_catalog_lacks_takes_the_stored_answer_with_its_source(aws_endpoint_url: str) -> None:
    # m5.24xlarge as EC2 describes it (EbsOptimizedInfo): 19,000 Mbps and 80,000 IOPS, no burst (
    # docs/reference/ec2-ebs-limits.md#limits-table, docs/reference/ec2-ebs-limits.md#describeinstancetypes), stored under a name the catalog lacks.
    got = resolve_instance_limits("zz8.24xlarge", _described(aws_endpoint_url, "m5.24xlarge"))
    assert got.origin == "describe_instance_types" and got.known
    assert got.limits is not None
    # 19,000 Mbps / 8 = 2,375 MB/s = 2,265 MiB/s (docs/reference/ec2-ebs-limits.md#units)
    assert got.limits.baseline_throughput_mbps == pytest.approx(2375)
    assert got.limits.max_throughput_mibps == pytest.approx(2375 / 1.048576)
    assert (got.limits.baseline_iops, got.limits.bursts) == (80000, False)
    assert got.note == got.limits.source == "DescribeInstanceTypes EbsInfo (us-east-1, observed 2026-11-01)"
