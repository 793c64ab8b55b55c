"""Each advisor rule against material no one here wrote: a case built from a public document's own example.

The simulator's scenarios (examples/scenarios) test the rules on loads we made up; these cases take their inputs
from a public page and derive the expected number from that page's arithmetic, in the test, never from the
advisor's output. A finding the document implies must appear with the documented number (within the stated
tolerance); a case the document calls fine must not produce it.

| rule                          | source (case)                                                                                     |
|-------------------------------|---------------------------------------------------------------------------------------------------|
| gp2-burst-depletion           | AWS, General Purpose SSD volumes: 100 GiB gp2, 300 IOPS baseline, 5.4 M credits last 2,000 s at 3,000 IOPS |
| volume-iops-ceiling           | AWS, General Purpose SSD volumes: gp3 baseline 3,000 IOPS                                         |
| volume-throughput-ceiling     | AWS, General Purpose SSD volumes: gp3 baseline 125 MiB/s, in 256 KiB I/Os                          |
| instance-ebs-bandwidth-bound  | PingCAP, Best Practices for TiDB on AWS Cloud (m5.2xlarge, io1); AWS EBS-optimized instances table  |
| instance-ebs-burst-depletion  | AWS, Amazon EBS-optimized instances: m5.2xlarge 287.5 / 593.75 MB/s, the maximum for 30 min a day |
| gp2-to-gp3                    | AWS Prescriptive Guidance, Migrate gp2 to gp3: 500 GiB gp2 $50 -> gp3 $40 a month                   |
| volume-overprovisioned        | AWS, Amazon EBS pricing (io1 $0.125/GB + $0.065/IOPS) and io1 50 IOPS/GiB (AWS volume types)       |
| disk-low-space                | PingCAP, PD Configuration File: schedule.low-space-ratio 0.8, high-space-ratio 0.7                 |
| filesystem-not-grown          | AWS, Extend the file system after resizing an EBS volume                                          |
| projected-ceiling             | AWS, General Purpose SSD volumes: gp3 3,000 IOPS, reached by a linear growth in 20 days            |
| block-cache-size              | PingCAP, Best Practices for TiDB on AWS Cloud: 4 GB of block cache on 32 GB (shrink); TiKV Configuration File: 45% default (grow) |
| block-size                    | PingCAP, Best Practices for TiDB on AWS Cloud, Block size: smaller blocks where bandwidth binds, <= 2x IOPS |
| compaction-rate-limit         | TiKV config template: 50%-80% of disk throughput; PingCAP AWS article's 100MB; PingCAP EKS gp3 400 MiB/s |
| compaction-io-titan           | PingCAP, TiDB Best Practices on Public Cloud: Titan above 512 B rows, zstd at every level at or below |
| raft-dedicated-volume         | PingCAP, TiDB Best Practices on Public Cloud: ~571 Raft flushes/s, a dedicated 20 GB gp3           |
| thread-pool-saturation        | PingCAP, Tune TiKV Thread Pool Performance: scheduler 50%-75% (400%-600% of 8 threads), < vCPUs    |
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from advisor_fixtures import of_rule, scenario_snapshot, synthetic, with_history
from headroom.domain.advisor import advise

# AWS, "Amazon EBS General Purpose SSD volumes"
# (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html; docs/reference/gp2-burst.md).
GP2_IOPS_PER_GIB = 3.0
GP2_BURST_IOPS = 3000.0
GP2_BUCKET_CREDITS = 5.4e6
GP3_BASELINE_IOPS = 3000.0
GP3_BASELINE_MIBPS = 125.0
EBS_SSD_MAX_IO_KIB = 256.0  # AWS, "I/O characteristics and monitoring": SSD I/Os up to 256 KiB count as one


def _measures(f: Any) -> dict[str, Any]:
    return {m.label: m for m in f.evidence.measures}


# ---------------------------------------------------------------------------------------------------------
# gp2-burst-depletion: AWS's own example. "a 100 GiB gp2 volume has a baseline of 300 IOPS ... a full bucket of
# 5.4 million credits sustains 3,000 IOPS for 5.4e6 / (3,000 - 300) = 2,000 s" (General Purpose SSD volumes,
# I/O credits and burst performance; docs/reference/gp2-burst.md#worked-durations).


def _gp2_100_gib(demand: float, minutes_at_demand: int) -> tuple[Any, float]:
    baseline = GP2_IOPS_PER_GIB * 100
    drain_s = GP2_BUCKET_CREDITS / (GP2_BURST_IOPS - baseline)
    served = np.full(1440, baseline * 0.5)
    balance = np.full(1440, 100.0)
    at = 600
    drain_min = int(drain_s // 60)
    if demand > baseline:
        served[at : at + drain_min] = min(demand, GP2_BURST_IOPS)
        served[at + drain_min : at + minutes_at_demand] = baseline  # held at the baseline once the bucket is empty
        balance[at : at + drain_min] = np.linspace(100.0, 0.0, drain_min)
        balance[at + drain_min : at + minutes_at_demand] = 0.0
        refill_min = int(GP2_BUCKET_CREDITS / (baseline - baseline * 0.5) / 60)
        end = at + minutes_at_demand
        balance[end : end + refill_min] = np.linspace(0.0, 100.0, refill_min)[: 1440 - end]
    else:
        served[at : at + minutes_at_demand] = demand
    snap = synthetic(
        volume={"type": "gp2", "size_gib": 100},
        read_iops=served,
        extra_volume_series={"ebs.burst_balance": balance},
    )
    return snap, drain_s


def test_gp2_100_gib_empties_its_bucket_in_2000_s_at_3000_iops() -> None:
    snap, drain_s = _gp2_100_gib(3000.0, 240)
    assert drain_s == pytest.approx(2000.0)  # the document's number
    (f,) = of_rule(advise(snap, rules=["gp2-burst-depletion"]), "gp2-burst-depletion")
    m = _measures(f)
    assert m["drain-period demand p95"].limit == pytest.approx(GP2_IOPS_PER_GIB * 100)  # 300 IOPS baseline
    assert m["burst ceiling"].value == pytest.approx(GP2_BURST_IOPS)
    assert m["minimum BurstBalance"].value == 0.0
    # The full bucket's duration at the burst rate is the document's 2,000 s (written in minutes: ~33 min).
    text = " ".join(f.evidence.corroboration)
    assert "33 min" in text or "34 min" in text, text


def test_gp2_100_gib_at_its_300_iops_baseline_is_fine() -> None:
    # At or under the baseline a gp2 volume earns credits and never drains (same page): no finding.
    snap, _ = _gp2_100_gib(300.0, 240)
    assert of_rule(advise(snap, rules=["gp2-burst-depletion"]), "gp2-burst-depletion") == []


# ---------------------------------------------------------------------------------------------------------
# volume-iops-ceiling and volume-throughput-ceiling: gp3's baseline is 3,000 IOPS and 125 MiB/s whatever its size
# (General Purpose SSD volumes, gp3; docs/reference/ebs-volume-types.md#limits-per-volume-type). A 1,000 GiB gp3 at
# its defaults, read for 3 hours at the ceiling, then well under it.
GP3_DEFAULT = {"type": "gp3", "size_gib": 1000, "iops": 3000, "throughput_mibps": 125}


def _plateau(base: float, level: float, minutes: int = 180, at: int = 600) -> np.ndarray[Any, Any]:
    out = np.full(1440, base)
    out[at : at + minutes] = level
    return out


def test_gp3_read_at_its_3000_iops_baseline_is_at_the_iops_ceiling() -> None:
    snap = synthetic(volume=GP3_DEFAULT, read_iops=_plateau(1200.0, GP3_BASELINE_IOPS), read_kib=16.0)
    (f,) = of_rule(advise(snap, rules=["volume-iops-ceiling"]), "volume-iops-ceiling")
    limits = {m.limit for m in f.evidence.measures if m.unit == "IOPS" and m.limit}
    assert GP3_BASELINE_IOPS in limits, limits


def test_gp3_at_two_thirds_of_its_iops_is_fine() -> None:
    snap = synthetic(volume=GP3_DEFAULT, read_iops=_plateau(1200.0, 2000.0), read_kib=16.0)
    assert of_rule(advise(snap, rules=["volume-iops-ceiling"]), "volume-iops-ceiling") == []


def test_gp3_read_at_125_mib_s_in_256_kib_ios_is_at_the_throughput_ceiling() -> None:
    # 125 MiB/s in 256 KiB I/Os is 125 x 4 = 500 I/Os a second, far under the 3,000 IOPS: bytes bind first.
    iops = GP3_BASELINE_MIBPS * 1024 / EBS_SSD_MAX_IO_KIB
    assert iops == 500.0
    snap = synthetic(volume=GP3_DEFAULT, read_iops=_plateau(100.0, iops), read_kib=EBS_SSD_MAX_IO_KIB)
    assert of_rule(advise(snap, rules=["volume-iops-ceiling"]), "volume-iops-ceiling") == []
    (f,) = of_rule(advise(snap, rules=["volume-throughput-ceiling"]), "volume-throughput-ceiling")
    limits = {m.limit for m in f.evidence.measures if m.unit == "MiB/s" and m.limit}
    assert GP3_BASELINE_MIBPS in limits, limits


def test_gp3_at_half_its_throughput_is_fine() -> None:
    snap = synthetic(volume=GP3_DEFAULT, read_iops=_plateau(100.0, 250.0), read_kib=EBS_SSD_MAX_IO_KIB)
    assert of_rule(advise(snap, rules=["volume-throughput-ceiling"]), "volume-throughput-ceiling") == []


# ---------------------------------------------------------------------------------------------------------
# instance-ebs-burst-depletion: AWS "Amazon EBS-optimized instances"
# (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ebs-optimized.html;
# docs/reference/ec2-ebs-limits.md#limits-table and #the-burst-rule): m5.2xlarge 2,300 Mbps baseline = 287.5 MB/s, 4,750 Mbps
# maximum = 593.75 MB/s, and "can support their maximum performance for 30 minutes at least once every 24
# hours". So a full bucket holds 30 min x (593.75 - 287.5) MB/s, and a demand at the maximum empties it in 30 min.
M5_2XL_BASE_MIBPS = 287.5e6 / 2**20  # ~274.2 MiB/s
M5_2XL_MAX_MIBPS = 593.75e6 / 2**20  # ~566.2 MiB/s


def _m5_2xlarge(demand_mibps: float, minutes: int = 240) -> Any:
    at = 600
    served = np.full(1440, 100.0)
    balance = np.full(1440, 100.0)
    if demand_mibps > M5_2XL_BASE_MIBPS:
        served[at : at + 30] = min(demand_mibps, M5_2XL_MAX_MIBPS)
        served[at + 30 : at + minutes] = M5_2XL_BASE_MIBPS
        balance[at : at + 30] = np.linspace(100.0, 0.0, 30)
        balance[at + 30 : at + minutes] = 0.0
    else:
        served[at : at + minutes] = demand_mibps
    return synthetic(
        volume={"type": "gp3", "size_gib": 2000, "iops": 8000, "throughput_mibps": 1000},
        read_iops=served * 4,  # 256 KiB reads: 4 per MiB
        read_kib=EBS_SSD_MAX_IO_KIB,
        instance_type="m5.2xlarge",
        instance_series={"ec2.ebs_byte_balance": balance, "ec2.ebs_io_balance": np.full(1440, 100.0)},
    )


def test_m5_2xlarge_at_its_maximum_empties_its_ebs_burst_in_30_minutes() -> None:
    (f,) = of_rule(advise(_m5_2xlarge(M5_2XL_MAX_MIBPS), rules=["instance-ebs-burst-depletion"]),
                   "instance-ebs-burst-depletion")
    m = _measures(f)
    assert m["minimum instance EBS throughput burst balance"].value == 0.0
    demand = m["drain-period demand p95"].value
    # the document's bucket, drained at the finding's own demand: 30 min x (max - base) / (demand - base)
    minutes = 30 * (M5_2XL_MAX_MIBPS - M5_2XL_BASE_MIBPS) / (demand - M5_2XL_BASE_MIBPS)
    assert minutes >= 30 - 1
    text = " ".join(f.evidence.corroboration)
    assert f"a full bucket lasts {round(minutes)} min" in text or f"lasts {math.floor(minutes)} min" in text, text


def test_m5_2xlarge_under_its_baseline_is_fine() -> None:
    snap = _m5_2xlarge(250.0)
    assert of_rule(advise(snap, rules=["instance-ebs-burst-depletion"]), "instance-ebs-burst-depletion") == []


# instance-ebs-bandwidth-bound: PingCAP's m5.2xlarge TPC-C setup ("Best Practices for TiDB on AWS Cloud",
# https://www.pingcap.com/blog/best-practices-for-tidb-on-aws-cloud/;
# docs/reference/pingcap-guidance.md#instance-ebs-bandwidth): each node's 1 TB io1 at 6,000 IOPS "could give far more throughput than either instance allows";
# "the actual performance is tightly bounded by EC2 bandwidth", and m5.4xlarge doubled it. io1 6,000 IOPS x 256 KiB
# is capped at 500 MiB/s below 32,000 IOPS (docs/reference/ebs-io-accounting.md#io1-throughput-rule); the
# m5.2xlarge sustains 287.5 MB/s (~274 MiB/s) with its burst spent. Reads pinned there: the instance binds, and
# the fix is m5.4xlarge (593.75 MB/s sustained, ~566 MiB/s: more than the 274 needed).
def test_pingcaps_m5_2xlarge_with_a_6000_iops_io1_is_bound_by_the_instance() -> None:
    snap = synthetic(
        volume={"type": "io1", "size_gib": 1000, "iops": 6000},
        read_iops=np.full(1440, M5_2XL_BASE_MIBPS * 4),  # 256 KiB reads: 4 per MiB
        read_kib=EBS_SSD_MAX_IO_KIB,
        instance_type="m5.2xlarge",
        instance_series={"ec2.ebs_byte_balance": np.zeros(1440), "ec2.ebs_io_balance": np.full(1440, 100.0)},
    )
    (f,) = of_rule(advise(snap, rules=["instance-ebs-bandwidth-bound"]), "instance-ebs-bandwidth-bound")
    limits = [m.limit for m in f.evidence.measures if m.unit == "MiB/s" and m.limit]
    assert any(lim == pytest.approx(M5_2XL_BASE_MIBPS, rel=1e-3) for lim in limits), limits
    assert {c.key: c.proposed for c in f.changes}["instance.type"] == "m5.4xlarge"
    # the volume itself is far from its own 500 MiB/s: no volume finding
    assert of_rule(advise(snap, rules=["volume-throughput-ceiling"]), "volume-throughput-ceiling") == []


def test_the_same_node_at_half_its_instance_bandwidth_is_fine() -> None:
    snap = synthetic(
        volume={"type": "io1", "size_gib": 1000, "iops": 6000},
        read_iops=np.full(1440, M5_2XL_BASE_MIBPS * 2),
        read_kib=EBS_SSD_MAX_IO_KIB,
        instance_type="m5.2xlarge",
        instance_series={"ec2.ebs_byte_balance": np.full(1440, 100.0), "ec2.ebs_io_balance": np.full(1440, 100.0)},
    )
    assert of_rule(advise(snap, rules=["instance-ebs-bandwidth-bound"]), "instance-ebs-bandwidth-bound") == []


# ---------------------------------------------------------------------------------------------------------
# gp2-to-gp3: AWS Prescriptive Guidance, "Migrate Amazon EBS volumes from gp2 to gp3"
# (https://docs.aws.amazon.com/prescriptive-guidance/latest/optimize-costs-microsoft-workloads/ebs-migrate-gp2-gp3.html;
# docs/reference/ebs-prices.md): gp2 $0.10 per GB-month, gp3 $0.08 with 3,000 IOPS and 125 MiB/s included. A 500
# GiB gp2 costs 500 x 0.10 = $50; the same size in gp3 500 x 0.08 = $40 ("up to 20% lower"). A volume whose peak is
# well inside gp3's free 3,000 IOPS / 125 MiB/s moves for $40.


def test_a_quiet_500_gib_gp2_moves_to_gp3_for_40_dollars() -> None:
    # 14 days of the same load behind the window: a cut is judged on that lookback, not held (docs/reference/lookback.md)
    snap = with_history(
        synthetic(volume={"type": "gp2", "size_gib": 500}, read_iops=_plateau(300.0, 900.0), read_kib=16.0))
    (f,) = of_rule(advise(snap, rules=["gp2-to-gp3"]), "gp2-to-gp3")
    assert f.impact.monthly_cost_before_usd == pytest.approx(500 * 0.10)
    assert f.impact.monthly_cost_after_usd == pytest.approx(500 * 0.08)
    changes = {c.key: c.proposed for c in f.changes}
    assert (changes["volume.type"], changes["volume.iops"], changes["volume.throughput"]) == ("gp3", 3000, 125.0)


# ---------------------------------------------------------------------------------------------------------
# volume-overprovisioned: AWS, Amazon EBS pricing (https://aws.amazon.com/ebs/pricing/;
# docs/reference/ebs-prices.md): io1 $0.125 per GB-month + $0.065 per provisioned IOPS-month. A 1,000 GiB io1 provisioned at
# 10,000 IOPS (within io1's 50 IOPS per GiB, AWS "Provisioned IOPS SSD volumes") costs 125 + 650 = $775 a month.
# Used at 600 IOPS of 16 KiB, it fits a gp3's free 3,000 IOPS / 125 MiB/s: 1,000 x 0.08 = $80.


def test_an_io1_at_6_percent_of_its_iops_is_overprovisioned() -> None:
    snap = with_history(synthetic(
        volume={"type": "io1", "size_gib": 1000, "iops": 10000}, read_iops=_plateau(300.0, 600.0), read_kib=16.0
    ))
    (f,) = of_rule(advise(snap, rules=["volume-overprovisioned"]), "volume-overprovisioned")
    before = 1000 * 0.125 + 10000 * 0.065
    assert f.impact.monthly_cost_before_usd == pytest.approx(before)
    costs = [f.impact.monthly_cost_after_usd, *(o.impact.monthly_cost_after_usd for o in f.options)]
    assert pytest.approx(1000 * 0.08) in costs, costs


def test_an_io1_used_at_its_provisioned_iops_is_not_overprovisioned() -> None:
    snap = synthetic(
        volume={"type": "io1", "size_gib": 1000, "iops": 10000}, read_iops=_plateau(6000.0, 9500.0), read_kib=16.0
    )
    assert of_rule(advise(snap, rules=["volume-overprovisioned"]), "volume-overprovisioned") == []


# ---------------------------------------------------------------------------------------------------------
# disk-low-space: PingCAP, "PD Configuration File" (https://docs.pingcap.com/tidb/stable/pd-configuration-file,
# schedule.low-space-ratio 0.8: "the threshold ratio of storage space ... PD stops migrating data to the store";
# high-space-ratio 0.7: below it the store has enough space). A store at 85% of its capacity is past the low-space
# line; the fix grows its volume until today's use sits at the high-space line: used / 0.7. At 60% it is fine.
PD_LOW_SPACE_RATIO = 0.8
PD_HIGH_SPACE_RATIO = 0.7
GIB = 1024.0**3


def _store_used(share: float) -> Any:
    from headroom.domain.snapshot.views import disk_view

    snap = scenario_snapshot("healthy")
    node = snap.nodes[0]
    cap = disk_view(snap, node.id).capacity
    series = [
        s.model_copy(update={"values": [float(v) for v in cap * (1.0 - share)]})
        if s.entity.id == node.id and s.metric == "tikv.store_available_bytes"
        else s
        for s in snap.series
    ]
    return snap.model_copy(update={"series": series}), node, float(cap[-1])


def test_a_store_at_85_percent_is_past_pds_low_space_line_and_grows_to_the_high_space_line() -> None:
    snap, node, capacity = _store_used(0.85)
    (f,) = of_rule(advise(snap, rules=["disk-low-space"]), "disk-low-space")
    assert f.entity.id == node.id and f.severity == "critical"
    assert f.evidence.measures[0].limit == PD_LOW_SPACE_RATIO
    assert f.evidence.measures[0].value == pytest.approx(0.85, abs=1e-3)
    (grow,) = [c for c in f.changes if c.key == "volume.size"]
    # the filesystem is a fixed share of the volume: used / 0.7 of capacity, in the volume's GiB
    fs_share = capacity / (float(grow.current) * GIB)
    need_gib = 0.85 * capacity / PD_HIGH_SPACE_RATIO / fs_share / GIB
    assert need_gib <= float(grow.proposed) < need_gib + 10.0 + 1e-6  # rounded up to 10 GiB steps


def test_a_store_at_60_percent_is_under_pds_lines() -> None:
    snap, _, _ = _store_used(0.60)
    assert of_rule(advise(snap, rules=["disk-low-space"]), "disk-low-space") == []


# ---------------------------------------------------------------------------------------------------------
# filesystem-not-grown: AWS, "Extend the file system after resizing an EBS volume"
# (https://docs.aws.amazon.com/ebs/latest/userguide/recognize-expanded-volume-linux.html): after ModifyVolume the
# volume is larger but the filesystem keeps its size until resize2fs / xfs_growfs runs. A 1,000 GiB data volume
# grown to 2,000 GiB in AWS, the filesystem left at ~985 GiB: 1,000 GiB paid and unused.


def test_a_volume_doubled_in_aws_with_its_filesystem_left_behind() -> None:
    snap = scenario_snapshot("healthy")
    vid = snap.nodes[0].data_volume_ids[0]
    grown = snap.model_copy(
        update={"volumes": [v.model_copy(update={"size_gib": 2000.0}) if v.id == vid else v for v in snap.volumes]}
    )
    (f,) = of_rule(advise(grown, rules=["filesystem-not-grown"]), "filesystem-not-grown")
    assert f.impact.after == 2000.0 and f.impact.before == pytest.approx(985.0, abs=15.0)
    assert "recognize-expanded-volume-linux" in " ".join(f.notes)
    assert of_rule(advise(snap, rules=["filesystem-not-grown"]), "filesystem-not-grown") == []


# ---------------------------------------------------------------------------------------------------------
# projected-ceiling: the gp3 3,000 IOPS baseline (AWS, General Purpose SSD volumes) as the ceiling of a linear
# growth: 1,800 IOPS today, +60 a day, reaches 3,000 in (3,000 - 1,800) / 60 = 20 days. At +20 a day it is 60 days
# away, beyond the rule's 30-day horizon (docs/thresholds/projected-ceiling.md): fine.


def _gp3_projection(per_day: float) -> Any:
    from datetime import timedelta

    from headroom.domain.snapshot.schema import Entity, ForecastBand, ProjectedCeiling

    snap = synthetic(volume=GP3_DEFAULT, read_iops=np.full(1440, 1800.0), read_kib=16.0)
    t = [snap.window.end + timedelta(hours=6 * i) for i in range(90 * 4)]
    point = [1800.0 + per_day * i / 4 for i in range(len(t))]
    band = ForecastBand(t=t, point=point, low=[0.95 * p for p in point], high=[1.05 * p for p in point])
    proj = ProjectedCeiling(
        entity=Entity(kind="volume", id="vol-1"), metric="iops", unit="IOPS", ceiling=GP3_BASELINE_IOPS,
        ceiling_source="AWS gp3 baseline", method="ets-weekly", history_hours=28 * 24, level_now=1800.0,
        growth_percent_per_week=per_day * 7 / 1800.0 * 100, days=None, days_low=None, days_high=None,
        horizon_days=90.0, interval=0.9, fitted_at=snap.window.end, history_end=snap.window.end, band=band,
    )
    return snap.model_copy(update={"projections": [proj]})


def test_gp3_growing_60_iops_a_day_from_1800_reaches_its_baseline_in_20_days() -> None:
    days = (GP3_BASELINE_IOPS - 1800.0) / 60.0
    assert days == 20.0
    (f,) = of_rule(advise(_gp3_projection(60.0), rules=["projected-ceiling"]), "projected-ceiling")
    assert f"in {int(days)} days" in f.title, f.title
    assert f.evidence.forecasts[0].value == GP3_BASELINE_IOPS
    assert f.evidence.forecasts[0].within_seconds == pytest.approx(days * 86400, rel=0.02)


def test_gp3_growing_20_iops_a_day_is_60_days_away_and_fine() -> None:
    assert of_rule(advise(_gp3_projection(20.0), rules=["projected-ceiling"]), "projected-ceiling") == []


# ---------------------------------------------------------------------------------------------------------
# The TiKV rules, on one simulated store whose hardware and settings are the public page's own.


def _one_store(doc: str) -> Any:
    import yaml
    from advisor_fixtures import START
    from headroom.domain.snapshot.scenario import scenario_from_dict
    from headroom.domain.snapshot.simulate import simulate

    spec: dict[str, Any] = yaml.safe_load(doc)
    spec["cluster"] = {"name": "public-case", "tikv_version": "v8.5.1", "deployment": "tiup"}
    return simulate(scenario_from_dict(spec), hours=24.0, seed=0, start=START)


def _node_findings(snap: Any, rule: str) -> list[Any]:
    return of_rule(advise(snap, rules=[rule], cluster_wide=False), rule)


# block-cache-size, shrink: PingCAP, "Best Practices for TiDB on AWS Cloud"
# (https://www.pingcap.com/blog/best-practices-for-tidb-on-aws-cloud/, "Cache allocation";
# docs/reference/pingcap-guidance.md#block-cache-on-ebs): in TPC-C "to avoid read IOPS from hitting the EBS limit,
# we reserve 4 GB for block cache in EC2 instances with 32 GB memory" - an eighth of memory, against TiKV's default
# of 45%. Its hardware: m5.2xlarge (32 GiB, AWS) with a 1 TB io1 at 6,000 IOPS; a read set far larger than memory.
BLOCK_CACHE_READ_HEAVY = """
workload: {reads_per_sec: %(reads)s, write_mibps: 2.0, fsyncs_per_sec: 60, working_set_gib: 300,
           diurnal: {amplitude: 0.2, peak_hour_utc: 14}}
nodes: [{name: tikv, count: 1, instance_type: m5.2xlarge,
         volumes: [{role: data, type: io1, size_gib: 1000, iops: 6000}, {role: raft, type: gp3, size_gib: 20}]}]
"""


def test_reads_at_the_io1_iops_limit_on_32_gib_shrink_the_block_cache_to_4_gib() -> None:
    (f,) = _node_findings(_one_store(BLOCK_CACHE_READ_HEAVY % {"reads": 9000}), "block-cache-size")
    assert f.dedup_key.endswith("/shrink")
    m = _measures(f)
    assert m["counted IOPS p95"].limit == 6000.0  # the io1's provisioned IOPS
    assert m["memory per TiKV"].value == 32.0
    (change,) = f.changes
    assert change.key == "storage.block-cache.capacity"
    assert change.proposed == f"{int(32 / 8)}GiB"  # the article's 4 GB of 32 GB


def test_reads_at_half_the_io1_iops_keep_the_default_block_cache() -> None:
    found = _node_findings(_one_store(BLOCK_CACHE_READ_HEAVY % {"reads": 2500}), "block-cache-size")
    assert [f for f in found if f.dedup_key.endswith("/shrink")] == []


# block-cache-size, grow: PingCAP, "TiKV Configuration File"
# (https://docs.pingcap.com/tidb/stable/tikv-configuration-file#capacity;
# docs/reference/pingcap-guidance.md#block-cache): storage.block-cache.capacity defaults to 45% of the system's memory. A 64 GiB r6i.2xlarge (AWS instance
# page) running an explicit 8 GiB cache (12.5%) with a poor hit ratio and disks far from their ceilings is raised to
# what TiKV would give it by default: floor(0.45 x 64) = floor(28.8) = 28 GiB.


def test_an_8_gib_cache_on_64_gib_is_raised_to_tikvs_45_percent_default() -> None:
    snap = _one_store("""
workload: {reads_per_sec: 12000, write_mibps: 2.0, working_set_gib: 60, diurnal: {amplitude: 0.3, peak_hour_utc: 14}}
nodes: [{name: tikv, count: 1, instance_type: r6i.2xlarge, config: {storage.block-cache.capacity: 8GiB},
         volumes: [{role: data, type: gp3, size_gib: 1500}, {role: raft, type: gp3, size_gib: 20}]}]
""")
    (f,) = _node_findings(snap, "block-cache-size")
    (change,) = f.changes
    assert change.proposed == f"{math.floor(0.45 * 64)}GiB"


# block-size: the same AWS article, "Block size" (docs/reference/pingcap-guidance.md#block-size): where bandwidth
# binds and provisioned IOPS are to spare, a smaller block cuts read throughput "at the cost of more read I/Os";
# "from 64 KiB to 4 KiB doubles read IOPS and halves read throughput". An m5.4xlarge with an io1 of 20,000 IOPS
# (below 32,000 IOPS io1 delivers at most 500 MiB/s: docs/reference/ebs-io-accounting.md#io1-throughput-rule,
# https://docs.aws.amazon.com/ebs/latest/userguide/provisioned-iops.html) and 64 KiB blocks, read-heavy: the
# volume's 500 MiB/s binds, its IOPS do not. A smaller block, and at most twice the IOPS (the article's bound for
# the whole 64 -> 4 KiB step). At a third of the bandwidth nothing binds: fine.
BLOCK_SIZE_DOC = """
workload: {reads_per_sec: %(reads)s, write_mibps: 4.0, working_set_gib: 500, diurnal: {amplitude: 0.3, peak_hour_utc: 14}}
nodes: [{name: tikv, count: 1, instance_type: m5.4xlarge,
         config: {rocksdb: {defaultcf: {block-size: 64KiB}, writecf: {block-size: 64KiB}}},
         volumes: [{role: data, type: io1, size_gib: 1000, iops: 20000}, {role: raft, type: gp3, size_gib: 20}]}]
"""


def test_bandwidth_bound_io1_with_iops_to_spare_gets_a_smaller_block() -> None:
    from headroom.domain.tikvconf.parse import config_number

    (f,) = _node_findings(_one_store(BLOCK_SIZE_DOC % {"reads": 12000}), "block-size")
    m = _measures(f)
    assert m["MiB/s p95"].limit == 500.0
    proposed = {c.key: c.proposed for c in f.changes}["rocksdb.defaultcf.block-size"]
    assert 4 * 1024 <= (config_number(proposed) or 0) < 64 * 1024
    iops_now = m["IOPS utilisation p95"].value
    iops_after = next(v for k, v in m.items() if k.startswith("projected IOPS utilisation")).value
    assert iops_now < iops_after <= 2 * iops_now


def test_a_third_of_the_io1_bandwidth_keeps_the_block_size() -> None:
    assert _node_findings(_one_store(BLOCK_SIZE_DOC % {"reads": 3000}), "block-size") == []


# compaction-rate-limit: TiKV's config template on rocksdb.rate-bytes-per-sec ("50% ~ 80% of the disk throughput";
# https://github.com/tikv/tikv/blob/master/etc/config-template.toml;
# docs/reference/pingcap-guidance.md#compaction-io) and PingCAP's AWS article, whose example sets rate-bytes-per-sec = "100MB". PingCAP's EKS page gives TiKV a
# gp3 at 4,000 IOPS / 400 MiB/s (https://docs.pingcap.com/tidb-in-kubernetes/stable/deploy-on-aws-eks). With
# heavy writes, 100 MB (TiKV reads MB as MiB) throttles compaction while the disk is half idle: raise it into
# 50%-80% of 400 MiB/s = 200-320 MiB/s.


def test_100mb_rate_limit_on_a_400_mib_s_gp3_is_raised_into_the_templates_band() -> None:
    from headroom.domain.tikvconf.parse import config_number

    snap = _one_store("""
workload: {reads_per_sec: 3000, write_mibps: 10.0, write_amplification: 10, value_size_bytes: 200,
           working_set_gib: 40, diurnal: {amplitude: 0.3, peak_hour_utc: 14}}
nodes: [{name: tikv, count: 1, instance_type: m7g.4xlarge, config: {rocksdb.rate-bytes-per-sec: 100MB},
         volumes: [{role: data, type: gp3, size_gib: 3000, iops: 4000, throughput_mibps: 400},
                   {role: raft, type: gp3, size_gib: 20}]}]
""")
    (f,) = _node_findings(snap, "compaction-rate-limit")
    assert _measures(f)["disk throughput ceiling"].value == 400.0
    (change,) = f.changes
    assert change.key == "rocksdb.rate-bytes-per-sec"
    proposed_mibps = (config_number(change.proposed) or 0) / 2**20
    assert 0.5 * 400 <= proposed_mibps <= 0.8 * 400


# compaction-io-titan: PingCAP, "TiDB Best Practices on Public Cloud"
# (https://docs.pingcap.com/tidb/stable/best-practices-on-public-cloud, "Reduce compaction I/O traffic in KV
# RocksDB"; docs/reference/pingcap-guidance.md#titan-and-compression): rows above 512 bytes -> Titan
# (min-blob-size "512B" or "1KB"); 512 bytes or less -> zstd at every level, Titan "is not applicable".


def test_titan_and_zstd_follow_pingcaps_512_byte_line() -> None:
    from headroom.domain.advisor.rules.titan import rank_options
    from headroom.domain.model import Impact, Option

    titan = Option(label="Titan", changes=[], impact=Impact(summary="t"))
    zstd = Option(label="zstd", changes=[], impact=Impact(summary="z"))
    assert [o.label for o in rank_options(4096.0, titan, zstd)] == ["Titan", "zstd"]
    assert [o.label for o in rank_options(513.0, titan, zstd)] == ["Titan", "zstd"]
    assert [o.label for o in rank_options(512.0, titan, zstd)] == ["zstd"]
    assert [o.label for o in rank_options(100.0, titan, zstd)] == ["zstd"]


def test_compaction_at_a_gp3_ceiling_offers_both_fixes_when_the_row_size_is_unknown() -> None:
    # The page's situation: a gp3 (250 MiB/s) whose bytes are mostly compaction. A snapshot carries no average row
    # size, so both of the page's fixes are offered, the reversible zstd first, with the 512-byte line in a note.
    snap = _one_store("""
workload: {reads_per_sec: 3000, write_mibps: 12.0, write_amplification: 8, value_size_bytes: 4096,
           key_size_bytes: 64, fsyncs_per_sec: 150, working_set_gib: 60, diurnal: {amplitude: 0.3, peak_hour_utc: 14}}
nodes: [{name: tikv, count: 1, instance_type: m6i.4xlarge, config: {rocksdb.titan.enabled: false},
         volumes: [{role: data, type: gp3, size_gib: 2000, iops: 4000, throughput_mibps: 250},
                   {role: raft, type: gp3, size_gib: 20}]}]
""")
    (f,) = _node_findings(snap, "compaction-io-titan")
    assert [o.label.split(" (")[0] for o in f.options] == ["zstd at every level for values <= 512 B",
                                                            "Titan for values > 512 B"]
    assert {c.key: c.proposed for c in f.changes}["rocksdb.defaultcf.compression-per-level"] == ["zstd"] * 7
    assert any("512 B" in n for n in f.notes)


# raft-dedicated-volume: PingCAP, "TiDB Best Practices on Public Cloud", "Use a dedicated disk for Raft Engine"
# (docs/reference/pingcap-guidance.md#raft-engine-disk): its write-heavy node's Raft Engine disk completes ~571
# flushes a second; the page's fix is a 20 GB gp3 of its own (gp3 $0.08 per GB-month: 20 x 0.08 = $1.60, AWS
# Prescriptive Guidance, docs/reference/ebs-prices.md). The same node with the Raft log already on its own gp3 is fine.
RAFT_DOC = """
workload: {reads_per_sec: 3000, write_mibps: 6.0, fsyncs_per_sec: 571, working_set_gib: 40,
           diurnal: {amplitude: 0.3, peak_hour_utc: 14}}
nodes: [{name: tikv, count: 1, instance_type: m6i.2xlarge,
         volumes: [{role: data, type: gp3, size_gib: 1500, iops: 3000, throughput_mibps: 150}%(raft)s]}]
"""


def test_571_raft_flushes_a_second_on_the_data_volume_get_a_20_gib_gp3() -> None:
    (f,) = _node_findings(_one_store(RAFT_DOC % {"raft": ""}), "raft-dedicated-volume")
    create = {c.key: c.proposed for c in f.changes}["volume.create"]
    assert isinstance(create, dict)
    assert (create["type"], create["size_gib"], create["role"]) == ("gp3", 20.0, "raft")
    assert f.impact.monthly_cost_delta_usd == pytest.approx(20 * 0.08)


def test_the_raft_log_on_its_own_gp3_is_fine() -> None:
    snap = _one_store(RAFT_DOC % {"raft": ", {role: raft, type: gp3, size_gib: 20}"})
    assert _node_findings(snap, "raft-dedicated-volume") == []


# thread-pool-saturation: PingCAP, "Tune TiKV Thread Pool Performance"
# (https://docs.pingcap.com/tidb/stable/tune-tikv-thread-performance;
# docs/reference/pingcap-guidance.md#thread-pools): keep the scheduler between 50% and 75% of its threads, "with 8 threads, scheduler worker CPU between
# 400% and 600%"; a pool "should be less than total CPU cores" (TiKV's config template). An m6i.4xlarge (16 vCPUs,
# AWS) with 8 scheduler threads burning all 8 cores: raise it so the p99 lands in the band, at most 16 - 1 = 15.
THREADS_DOC = """
workload: {reads_per_sec: 6000, write_mibps: 22.0, value_size_bytes: 100, key_size_bytes: 64, fsyncs_per_sec: 300,
           working_set_gib: 30, diurnal: {amplitude: 0.3, peak_hour_utc: 14},
           cpu_cost: {scheduler_us_per_write: %(us)s, apply_us_per_write: 4, raftstore_us_per_write: 3}}
nodes: [{name: tikv, count: 1, instance_type: m6i.4xlarge, config: {storage.scheduler-worker-pool-size: 8},
         volumes: [{role: data, type: gp3, size_gib: 2000, iops: 6000, throughput_mibps: 600},
                   {role: raft, type: gp3, size_gib: 20}]}]
"""


def test_8_scheduler_threads_at_800_percent_are_raised_into_pingcaps_band() -> None:
    found = [f for f in _node_findings(_one_store(THREADS_DOC % {"us": 50}), "thread-pool-saturation")
             if f.dedup_key.endswith("/scheduler")]
    (f,) = found
    (change,) = f.changes
    assert (change.key, change.current) == ("storage.scheduler-worker-pool-size", 8)
    p99_cores = _measures(f)["scheduler worker CPU p99"].value
    assert p99_cores > 0.75 * 8  # above 600% of 8 threads
    assert isinstance(change.proposed, int) and change.proposed <= 16 - 1
    assert 0.5 <= p99_cores / change.proposed <= 0.75


def test_8_scheduler_threads_inside_400_to_600_percent_are_fine() -> None:
    snap = _one_store(THREADS_DOC % {"us": 25})
    (cpu,) = [s for s in snap.series if s.metric == "tikv.thread_cpu.scheduler"]
    p95 = float(np.percentile([v for v in cpu.values if v is not None], 95))
    assert 4.0 <= p95 <= 6.0  # inside the page's 400%-600% for 8 threads
    found = [f for f in _node_findings(snap, "thread-pool-saturation") if f.dedup_key.endswith("/scheduler")]
    assert found == []
