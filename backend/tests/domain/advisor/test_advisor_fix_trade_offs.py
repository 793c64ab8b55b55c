"""Fixes say their trade-offs: io2's durability, the instance's EBS limit, zstd's CPU and restart.

Written from the sources: AWS "Amazon EBS volume types" and PingCAP's TiDB Cloud article (docs/reference/pingcap-guidance.md#volume-choice-on-aws: io2 99.999 %
durability, gp3 99.8-99.9 %),
docs/reference/ec2-ebs-limits.md#limits-table (the node gets the smaller of the instance limit and its volumes; m6i.2xlarge sustains 312.5 MB/s),
docs/reference/tikv-config.md#online-changes (compression-per-level is not changeable online) and RocksDB's compression guide.
"""

from __future__ import annotations

import numpy as np
import pytest
from advisor_fixtures import of_rule, scenario_findings, synthetic, with_history
from headroom.domain.advisor import advise

N = 1440


def test_io2_to_gp3_from_a_ceiling_rule_says_it_gives_up_durability() -> None:
    # io2 500 GiB at 4,000 IOPS, read at 4,000 IOPS (16 KiB) all day: pinned at its IOPS ceiling. Its options
    # include gp3 (cheaper per IOPS, docs/reference/ebs-prices.md#prices-us-east-1); the old note was written by the cost rule only.
    snap = synthetic(volume={"type": "io2", "size_gib": 500, "iops": 4000}, read_iops=np.full(N, 4000.0))
    (f,) = of_rule(advise(snap, rules=["volume-iops-ceiling"]), "volume-iops-ceiling")
    gp3 = [o for o in f.options if any(c.key == "volume.type" and c.proposed == "gp3" for c in o.changes)]
    assert gp3, "a gp3 option is offered"
    for option in gp3:
        assert any("99.999%" in n and "99.8-99.9%" in n for n in option.notes)
    io2 = [o for o in f.options if not any(c.key == "volume.type" for c in o.changes)]
    for option in io2:  # staying on io2 gives nothing up
        assert not any("99.999%" in n for n in option.notes)


def test_io2_over_provisioned_options_say_it_too() -> None:
    # io2 500 GiB at 16,000 IOPS read at 1,000 IOPS: over-provisioned; the gp3 option carries the note itself.
    # 14 days of history like this window: the cut is judged, not held (docs/reference/lookback.md).
    snap = with_history(
        synthetic(volume={"type": "io2", "size_gib": 500, "iops": 16000}, read_iops=np.full(N, 1000.0))
    )
    (f,) = of_rule(advise(snap, rules=["volume-overprovisioned"]), "volume-overprovisioned")
    assert any(c.key == "volume.type" and c.proposed == "gp3" for o in f.options for c in o.changes)
    for option in f.options:
        moves = any(c.key == "volume.type" and c.proposed == "gp3" for c in option.changes)
        assert any("99.999%" in n for n in option.notes) is moves


def test_gp3_throughput_is_sized_to_what_the_instance_can_carry() -> None:
    # gp3 1,000 GiB at the included 125 MiB/s, read at 500 × 256 KiB = 125 MiB/s all day: pinned at its MiB/s
    # ceiling. PingCAP's gp3 figure for TiKV is 400 MiB/s (docs/reference/pingcap-guidance.md#aws-deployment), but m6i.2xlarge sustains 312.5 MB/s
    # = 312.5e6 / 2^20 = 298.02 MiB/s of EBS (docs/reference/ec2-ebs-limits.md#limits-table): 400 MiB/s would pay for 102 MiB/s the node cannot
    # use. Sized to the instance: 298.02 rounded up to the 25 MiB/s step = 300 MiB/s (1,200 IOPS at 0.25 MiB/s
    # per IOPS is below gp3's included 3,000).
    snap = synthetic(
        volume={"type": "gp3", "size_gib": 1000, "iops": 3000, "throughput_mibps": 125},
        read_iops=np.full(N, 500.0),
        read_kib=256.0,
        instance_type="m6i.2xlarge",
    )
    (f,) = of_rule(advise(snap, rules=["volume-throughput-ceiling"]), "volume-throughput-ceiling")
    changes = {c.key: c.proposed for c in f.changes}
    assert changes["volume.throughput"] == 300.0
    best = f.options[0]
    assert any("sized to what the instance can carry" in n and "298 MiB/s" in n for n in best.notes)
    assert f.impact.after == pytest.approx(312.5e6 / 2**20, rel=1e-3)  # the node gets the instance's 298


@pytest.mark.parametrize("scenario", ["compaction-io-titan"])
def test_zstd_everywhere_says_cpu_and_restart(scenario: str) -> None:
    found = of_rule(scenario_findings(scenario), "compaction-io-titan")
    assert found
    for f in found:
        zstd = [o for o in f.options if o.label.startswith("zstd")]
        assert zstd
        for option in zstd:
            (change,) = option.changes
            assert change.key == "rocksdb.defaultcf.compression-per-level"
            assert change.online is False  # docs/reference/tikv-config.md#online-changes: not changeable online
            text = " ".join(option.notes)
            assert "CPU" in text and "rolling restart" in text
