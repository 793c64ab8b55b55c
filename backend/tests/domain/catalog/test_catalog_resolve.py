"""The one limits rule (headroom.domain.catalog.resolve): the catalog first, then the account's DescribeInstanceTypes
answer, then "unknown" with a note; volumes with their provisioned settings only where the type provisions them."""

from __future__ import annotations

import datetime as dt

import pytest
from headroom.domain.catalog.resolve import (
    DescribedType,
    described_source,
    resolve_instance_limits,
    resolve_volume_limits,
)

# m5.24xlarge's figures (19,000 Mbps, 80,000 IOPS), spoilt below to make unusable answers.
M5_24XL = {"baseline_bandwidth_mbps": 19000, "max_bandwidth_mbps": 19000, "baseline_iops": 80000, "max_iops": 80000}
SOURCE = described_source("us-east-1", dt.datetime(2026, 11, 1, tzinfo=dt.UTC))


# The catalog-wins and described-type cases run on what the moto server's DescribeInstanceTypes returns:
# test_catalog_refresh_moto.py (no hand-built rows where real-shaped ones exist).


@pytest.mark.parametrize("described", [None, DescribedType({"baseline_iops": 1}, SOURCE),
                                       DescribedType({**M5_24XL, "baseline_bandwidth_mbps": 0}, SOURCE)])
def test_without_a_usable_answer_the_type_is_unknown_and_the_note_says_so(described: DescribedType | None) -> None:
    got = resolve_instance_limits("zz9.mega", described)
    assert got.origin == "unknown" and got.limits is None and not got.known
    assert got.note.startswith("zz9.mega: EBS limits unknown.")
    assert "no finding judges" in got.note and "DescribeInstanceTypes" in got.note  # a public API name, not an internal section


def test_volumes_use_their_provisioned_settings_only_where_the_type_provisions_them() -> None:
    # gp2: DescribeVolumes reports Iops = the 3 IOPS/GiB baseline; it is not a setting (docs/reference/gp2-burst.md#baseline-and-burst).
    gp2 = resolve_volume_limits("gp2", 500, 1500, None).limits
    assert gp2 is not None and gp2.provisioned_iops is None and gp2.baseline_iops == 1500 and gp2.valid
    gp3 = resolve_volume_limits("gp3", 1000, 6000, 500).limits
    assert gp3 is not None and (gp3.provisioned_iops, gp3.max_throughput_mibps) == (6000, 500)
    io2 = resolve_volume_limits("io2", 2000, 20000, 999).limits  # io2 throughput follows the IOPS (docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025)
    assert io2 is not None and io2.provisioned_iops == 20000 and io2.provisioned_throughput_mibps is None
    unknown = resolve_volume_limits("standard", 100, None, None)
    assert unknown.limits is None and unknown.note.startswith("standard: limits unknown")
