"""Shell: read EC2 DescribeInstanceTypes (paginated) and write an instance-catalog override file.

The pure half (turning response pages into catalog entries) is
`headroom.domain.catalog.instance_types.entries_from_describe_instance_types`; this module only talks to AWS and
writes the file that `HEADROOM_INSTANCE_CATALOG` points the catalog at.
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

from headroom.domain.catalog.instance_types import catalog_document, entries_from_describe_instance_types

API_SOURCE = "EC2 DescribeInstanceTypes EbsInfo.EbsOptimizedInfo (domain.md §2.3)"


@dataclass(frozen=True)
class RefreshResult:
    """What a refresh wrote."""

    path: Path
    region: str
    instance_types: int


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
) -> RefreshResult:
    """Fetch instance EBS limits from EC2 and write them as a catalog override file."""
    pages = fetch_instance_type_pages(
        region=region, endpoint_url=endpoint_url, session=session, instance_types=instance_types
    )
    entries = entries_from_describe_instance_types(pages)
    generated_at = (now or datetime.now(UTC)).isoformat()
    document = catalog_document(entries, source=f"{API_SOURCE}, region {region}", generated_at=generated_at)
    write_catalog_file(document, out_path)
    return RefreshResult(path=out_path, region=region, instance_types=len(entries))
