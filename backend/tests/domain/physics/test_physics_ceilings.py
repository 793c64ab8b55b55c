"""Node ceilings: min(sum of volumes, instance limit). Numbers from docs/reference/ebs-volume-types.md#limits-per-volume-type, docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025, docs/reference/gp2-burst.md#the-credit-bucket, docs/reference/ec2-ebs-limits.md#limits-table."""

from __future__ import annotations

import pytest
from headroom.domain.catalog import instance_limits, volume_limits
from headroom.domain.physics.ceilings import node_ceilings

M5_2XL_BASE_MIBPS = 287.5e6 / 2**20  # docs/reference/ec2-ebs-limits.md#limits-table 287.5 MB/s in MiB/s
M5_2XL_MAX_MIBPS = 593.75e6 / 2**20  # docs/reference/ec2-ebs-limits.md#limits-table 593.75 MB/s ≈ 566 MiB/s (docs/reference/ec2-ebs-limits.md#units)


def test_single_gp3_volume_binds() -> None:
    # gp3 defaults 3,000 IOPS / 125 MiB/s (docs/reference/ebs-volume-types.md#limits-per-volume-type) under m5.2xlarge 12,000 / 287.5 MB/s (docs/reference/ec2-ebs-limits.md#limits-table).
    c = node_ceilings(instance_limits("m5.2xlarge"), [volume_limits("gp3", 500)])
    assert (c.sustained_iops.effective, c.sustained_iops.binding) == (3000, "volumes")
    assert (c.burst_iops.effective, c.burst_iops.binding) == (3000, "volumes")
    assert c.sustained_throughput_mibps.effective == pytest.approx(125)
    assert c.sustained_throughput_mibps.binding == "volumes"


def test_instance_binds_big_volumes() -> None:
    # docs/reference/ec2-ebs-limits.md#limits-table (KloudDB's example): "demand 20000 IOPS with m5.2xlarge ... not possible given the capping of 18750".
    vols = [volume_limits("gp3", 1000, 16000, 1000)] * 2
    c = node_ceilings(instance_limits("m5.2xlarge"), vols)
    assert (c.sustained_iops.volumes, c.sustained_iops.instance) == (32000, 12000)
    assert (c.sustained_iops.effective, c.sustained_iops.binding) == (12000, "instance")
    assert (c.burst_iops.effective, c.burst_iops.binding) == (18750, "instance")
    assert c.sustained_throughput_mibps.effective == pytest.approx(M5_2XL_BASE_MIBPS)
    assert c.burst_throughput_mibps.effective == pytest.approx(M5_2XL_MAX_MIBPS)
    assert c.burst_throughput_mibps.binding == "instance"


def test_gp2_burst_counts_in_burst_ceiling() -> None:
    # two 500 GiB gp2: baseline 1,500 each, burst 3,000 each (docs/reference/gp2-burst.md#the-credit-bucket).
    c = node_ceilings(instance_limits("m6i.2xlarge"), [volume_limits("gp2", 500)] * 2)
    assert c.sustained_iops.effective == 3000
    assert c.burst_iops.effective == 6000
    assert c.burst_iops.binding == "volumes"


@pytest.mark.parametrize(
    ("raid0", "sustained_iops"),
    [
        (False, 3000 + 6000),  # independent volumes add up
        (True, 2 * 3000),  # a RAID 0 stripe runs at N × the slowest member
    ],
)
def test_raid0_stripes(raid0: bool, sustained_iops: float) -> None:
    vols = [volume_limits("gp3", 500, 3000), volume_limits("gp3", 500, 6000)]
    c = node_ceilings(instance_limits("r5b.4xlarge"), vols, raid0=raid0)
    assert c.sustained_iops.effective == sustained_iops
    assert c.volume_count == 2


def test_no_volumes() -> None:
    c = node_ceilings(instance_limits("m5.large"), [])
    assert c.sustained_iops.effective == 0 and c.sustained_iops.binding == "volumes"


def test_equal_limits_bind_both() -> None:
    # m5.4xlarge sustains 18,750 IOPS (docs/reference/ec2-ebs-limits.md#limits-table); a gp3 at 18,750 IOPS matches it exactly.
    c = node_ceilings(instance_limits("m5.4xlarge"), [volume_limits("gp3", 1000, 18750, 500)])
    assert c.sustained_iops.binding == "both"
    assert c.to_dict()["sustained_iops"]["effective"] == 18750
