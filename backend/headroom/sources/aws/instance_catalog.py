"""Shell: read EC2 DescribeInstanceTypes and the AWS Price List API, and write an instance-catalog override file.

The pure halves (response pages into catalog entries, Price List products into prices) are
`headroom.domain.catalog.instance_types.entries_from_describe_instance_types` and
`headroom.domain.catalog.price_list.on_demand_prices`; this module only talks to AWS and writes the file that
`HEADROOM_INSTANCE_CATALOG` points the catalog at.

Prices: `pricing:GetProducts` through the us-east-1 Price List endpoint, for the region asked. Where the
credentials may not call it (AccessDenied) or it cannot be reached, the file carries no prices, the catalog keeps
its built-in us-east-1 table, and the result says why (`prices_note`).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from headroom.domain.catalog.instance_types import (
    BUILTIN_PRICE_SOURCE,
    apply_prices,
    catalog_document,
    entries_from_describe_instance_types,
)
from headroom.domain.catalog.price_list import (
    PRICING_ENDPOINT_REGION,
    SERVICE_CODE,
    get_products_filters,
    on_demand_prices,
)
from headroom.domain.references import EC2_PRICING, PRICE_LIST_API

API_SOURCE = "EC2 DescribeInstanceTypes EbsInfo.EbsOptimizedInfo"


@dataclass(frozen=True)
class RefreshResult:
    """What a refresh wrote."""

    path: Path
    region: str
    instance_types: int
    priced: int = 0  # entries with a price read from the Price List API
    prices_note: str = ""  # where the prices come from, or why they were not read


def fetch_instance_type_pages(
    *,
    region: str,
    endpoint_url: str | None = None,
    session: boto3.session.Session | None = None,
    instance_types: Sequence[str] | None = None,
    page_size: int | None = None,
) -> list[dict[str, Any]]:
    """Call DescribeInstanceTypes through its paginator and return every response page."""
    sess = session or boto3.session.Session()
    client = sess.client("ec2", region_name=region, endpoint_url=endpoint_url)
    kwargs: dict[str, Any] = {}
    if instance_types:
        kwargs["InstanceTypes"] = list(instance_types)
    paginator = client.get_paginator("describe_instance_types")
    if page_size is not None:
        kwargs["PaginationConfig"] = {"PageSize": page_size}  # MaxResults: 5-100 per the EC2 API
    return [dict(page) for page in paginator.paginate(**kwargs)]


def fetch_price_list(
    *,
    region: str,
    endpoint_url: str | None = None,
    session: boto3.session.Session | None = None,
    page_size: int = 100,
) -> list[str]:
    """Call pricing:GetProducts (paginated) for on-demand Linux instance prices in `region`; return PriceList."""
    sess = session or boto3.session.Session()
    client = sess.client("pricing", region_name=PRICING_ENDPOINT_REGION, endpoint_url=endpoint_url)
    paginator = client.get_paginator("get_products")
    out: list[str] = []
    for page in paginator.paginate(
        ServiceCode=SERVICE_CODE,
        Filters=get_products_filters(region),
        FormatVersion="aws_v1",
        PaginationConfig={"PageSize": page_size},  # GetProducts MaxResults: at most 100
    ):
        out.extend(page.get("PriceList", []))
    return out


def read_prices(
    *,
    region: str,
    endpoint_url: str | None = None,
    session: boto3.session.Session | None = None,
    now: datetime | None = None,
) -> tuple[dict[str, float], str]:
    """Return (prices by instance type, a note on where they come from or why there are none)."""
    try:
        price_list = fetch_price_list(region=region, endpoint_url=endpoint_url, session=session)
    except ClientError as exc:
        error = exc.response.get("Error", {})
        reason = f"{error.get('Code', 'error')}: {error.get('Message', '')}".strip(": ")
        return {}, _fallback_note(region, f"the Price List API refused ({reason})")
    except BotoCoreError as exc:
        return {}, _fallback_note(region, f"the Price List API could not be reached ({exc})")
    prices = on_demand_prices(price_list, region=region)
    if not prices:
        return {}, _fallback_note(region, "the Price List API returned no on-demand Linux prices")
    day = (now or datetime.now(UTC)).date().isoformat()
    return prices, f"{EC2_PRICING.title} via {PRICE_LIST_API.title}, {region}, Linux on-demand, as of {day}"


def _fallback_note(region: str, why: str) -> str:
    return (
        f"prices not refreshed: {why}. The built-in table is used ({BUILTIN_PRICE_SOURCE})"
        + (f"; it has no {region} prices, so costs shown are us-east-1's" if region != "us-east-1" else "")
        + ". Allow pricing:GetProducts to read current prices."
    )


def write_catalog_file(document: dict[str, Any], out_path: Path) -> None:
    """Write a catalog document atomically (temp file in the same directory, then rename)."""
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out_path.parent, prefix=out_path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(document, fh, indent=1)
            fh.write("\n")
        os.replace(tmp, out_path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def refresh_instance_catalog(
    out_path: Path,
    *,
    region: str,
    endpoint_url: str | None = None,
    session: boto3.session.Session | None = None,
    instance_types: Sequence[str] | None = None,
    now: datetime | None = None,
    prices: bool = True,
    pricing_endpoint_url: str | None = None,
) -> RefreshResult:
    """Fetch instance EBS limits from EC2 (and, with `prices`, on-demand prices from the Price List API) and
    write them as a catalog override file."""
    pages = fetch_instance_type_pages(
        region=region, endpoint_url=endpoint_url, session=session, instance_types=instance_types
    )
    entries = entries_from_describe_instance_types(pages)
    priced = 0
    note = "prices not asked for (--no-prices): the built-in table is used"
    if prices:
        found, note = read_prices(region=region, endpoint_url=pricing_endpoint_url, session=session, now=now)
        entries = apply_prices(entries, found, region=region, price_source=note)
        priced = sum(1 for e in entries if e.get("price_region") == region and e["name"] in found)
    generated_at = (now or datetime.now(UTC)).isoformat()
    document = catalog_document(
        entries, source=f"{API_SOURCE}, region {region}", generated_at=generated_at, prices=note
    )
    write_catalog_file(document, out_path)
    return RefreshResult(
        path=out_path, region=region, instance_types=len(entries), priced=priced, prices_note=note
    )
