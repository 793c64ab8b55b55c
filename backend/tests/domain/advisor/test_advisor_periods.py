"""The advisor on data shaped as AWS delivers it, and "sustained" measured in time.

Sources: docs/reference/cloudwatch.md#volume-metrics AWS/EBS volume metrics every minute; docs/reference/cloudwatch.md#instance-ebs-metrics AWS/EC2 EBS metrics every 5 minutes on basic
monitoring, EBSIOBalance% / EBSByteBalance% only at 5 minutes; `B/s = Sum / period`. docs/reference/ec2-ebs-limits.md#limits-table: m5.4xlarge sustains
4,750 Mbps = 593.75 MB/s = 593.75e6 / 1,048,576 = 566.24 MiB/s; m5.2xlarge 287.5 MB/s (274.18 MiB/s) baseline,
593.75 MB/s maximum, a burst size (docs/reference/ec2-ebs-limits.md#the-burst-rule). Headroom's own thresholds: docs/thresholds/sustained.md.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from advisor_fixtures import of_rule, one_node_snapshot, plateau, synthetic
from headroom.domain.advisor import advise
from headroom.domain.advisor.context import Context
from headroom.domain.advisor.rules._common import SUSTAINED_SOURCE
from headroom.domain.snapshot.registry import REGISTRY
from headroom.domain.snapshot.schema import (
    Entity,
    Series,
    Snapshot,
    Volume,
)

START = datetime(2026, 1, 5, tzinfo=UTC)
MIB = 1024.0 * 1024.0
M5_4XL_MIBPS = 593.75e6 / MIB  # 566.24 MiB/s (docs/reference/ec2-ebs-limits.md#limits-table)
M5_2XL_BASE_MIBPS = 287.5e6 / MIB  # 274.18 MiB/s (docs/reference/ec2-ebs-limits.md#limits-table)
CHUNK = 256 * 1024.0  # 256 KiB writes: 4 per MiB, each counted once (docs/reference/ebs-io-accounting.md#io-size-cap)


def _series(kind: str, eid: str, metric: str, step: int, values: Any) -> Series:
    spec = REGISTRY[metric]
    return Series(
        entity=Entity(kind=kind, id=eid),  # type: ignore[arg-type]
        metric=metric,
        unit=spec.unit,
        statistic=spec.statistic,
        start=START,
        step_seconds=step,
        values=[None if np.isnan(v) else float(v) for v in np.asarray(values, dtype=np.float64)],
    )


def aws_shaped(
    instance_type: str,
    mibps_per_minute: np.ndarray[Any, Any],
    *,
    byte_balance_per_period: list[float] | None = None,
) -> Snapshot:
    """One node writing `mibps_per_minute` in 256 KiB writes: the volume's AWS/EBS series every minute, the
    instance's AWS/EC2 series (and its EBSByteBalance%) every 5 minutes, as CloudWatch delivers them."""
    minutes = len(mibps_per_minute)
    assert minutes % 5 == 0
    bytes_per_minute = mibps_per_minute * MIB * 60.0
    # A 5-minute Sum is the total of its five minutes (CloudWatch's Sum over the period).
    bytes_per_period = bytes_per_minute.reshape(-1, 5).sum(axis=1)
    zeros_1, zeros_5 = np.zeros(minutes), np.zeros(minutes // 5)
    series = [
        _series("volume", "vol-1", "ebs.read_ops", 60, zeros_1),
        _series("volume", "vol-1", "ebs.read_bytes", 60, zeros_1),
        _series("volume", "vol-1", "ebs.write_ops", 60, bytes_per_minute / CHUNK),
        _series("volume", "vol-1", "ebs.write_bytes", 60, bytes_per_minute),
        _series("instance", "i-1", "ec2.ebs_read_ops", 300, zeros_5),
        _series("instance", "i-1", "ec2.ebs_read_bytes", 300, zeros_5),
        _series("instance", "i-1", "ec2.ebs_write_ops", 300, bytes_per_period / CHUNK),
        _series("instance", "i-1", "ec2.ebs_write_bytes", 300, bytes_per_period),
    ]
    if byte_balance_per_period is not None:
        series += [
            _series("instance", "i-1", "ec2.ebs_byte_balance", 300, byte_balance_per_period),
            _series("instance", "i-1", "ec2.ebs_io_balance", 300, [100.0] * (minutes // 5)),
        ]
    # gp3 at 1,000 MiB/s and 16,000 IOPS: the volume has headroom, the instance binds.
    volume = Volume(
        id="vol-1", type="gp3", size_gib=2000, iops=16000, throughput_mibps=1000, instance_id="i-1", role="data"
    )
    return one_node_snapshot(instance_type, volume, series, minutes=minutes, name="aws-shaped", kind="collected")


def test_a_five_minute_sum_reads_as_its_rate() -> None:
    # 166 MiB/s for 3 hours: each 5-minute EBSWriteBytes Sum is 166 x 1,048,576 x 300 bytes; / 300 s = 166 MiB/s
    # (read as a 1-minute sum it would be 830 MiB/s, "pinned" above m5.4xlarge's 566 MiB/s).
    snap = aws_shaped("m5.4xlarge", np.full(180, 166.0))
    assert snap.series[-1].values[0] == pytest.approx(166 * MIB * 300)
    view = Context(snap).instance_io("i-1")
    assert view is not None and len(view.mibps) == 180
    assert view.mibps.tolist() == pytest.approx([166.0] * 180)
    assert not advise(snap, rules=["instance-ebs-bandwidth-bound", "volume-throughput-ceiling"])


def test_an_instance_pinned_25_minutes_at_its_limit_is_a_25_minute_finding() -> None:
    # 3 hours at 100 MiB/s, of which 25 minutes (five 5-minute periods, 01:00-01:25) at m5.4xlarge's 566.24 MiB/s.
    # Share: 25 / 180 = 13.9% >= 5% and 25 min >= 15 min: sustained. The volume (1,000 MiB/s) is at 57%.
    snap = aws_shaped("m5.4xlarge", plateau(100.0, M5_4XL_MIBPS, 25, total=180, at=60))
    found = of_rule(advise(snap), "instance-ebs-bandwidth-bound")  # mixed 1- and 5-minute series: no crash
    assert len(found) == 1
    f = found[0]
    assert f.severity == "critical"  # pinned: peak / limit >= 99%
    assert f.evidence.longest_run_minutes == 25.0  # 25 one-minute steps, not 5 samples
    assert f.evidence.share_of_window == pytest.approx(25 / 180, abs=1e-4)
    time_at = next(m for m in f.evidence.measures if m.unit == "min")
    assert time_at.value == 25.0 and time_at.source == SUSTAINED_SOURCE
    assert "25 min (13.9% of the window)" in f.title  # 25 / 180
    assert f.changes[0].proposed == "m5.8xlarge"  # 850 MB/s sustained (docs/reference/ec2-ebs-limits.md#limits-table) clears the clipped demand
    assert SUSTAINED_SOURCE in f.sources


def test_a_burst_instance_at_zero_balance_counts_the_balance_period_in_time() -> None:
    # m5.2xlarge: EBSByteBalance% (5-minute Minimum, docs/reference/cloudwatch.md#instance-ebs-metrics) reads 0 for five periods (25 min), while the node
    # writes at its 274.18 MiB/s baseline; otherwise 100 MiB/s and a full bucket.
    mibps = plateau(100.0, M5_2XL_BASE_MIBPS, 25, total=180, at=60)
    balance = [100.0] * 36
    balance[11] = 40.0  # 00:55-01:00 draining
    balance[12:17] = [0.0] * 5  # 01:00-01:25 empty
    snap = aws_shaped("m5.2xlarge", mibps, byte_balance_per_period=balance)
    ctx = Context(snap)
    held = ctx.series("instance", "i-1", "ec2.ebs_byte_balance")
    assert held is not None and len(held) == 180 and held[60:85].tolist() == [0.0] * 25
    found = of_rule(advise(snap), "instance-ebs-burst-depletion")
    throughput = [f for f in found if "Instance EBS throughput burst balance" in f.title]
    assert len(throughput) == 1
    time_at_zero = next(m for m in throughput[0].evidence.measures if m.label == "time at 0%")
    assert time_at_zero.value == 25.0  # 25 one-minute steps of the window: 5 periods x 5 min, never 5 min
    assert "25 min at the 274 MiB/s baseline" in throughput[0].title


def _one_hour_spike() -> Snapshot:
    # gp3 3,000 IOPS / 125 MiB/s on an m5.2xlarge; reads of 256 KiB at 100 IOPS (25 MiB/s) for an hour, with one
    # 3-minute spike to 3,000 IOPS (750 MiB/s issued: the volume's IOPS and MiB/s ceilings and the instance's
    # 566 MiB/s maximum). 3 minutes are 5% of the hour: the old share-only test called that sustained.
    return synthetic(
        volume={"type": "gp3", "size_gib": 1000, "iops": 3000, "throughput_mibps": 125},
        read_iops=plateau(100.0, 3000.0, 3, total=60, at=30),
        read_kib=256.0,
        instance_type="m5.2xlarge",
    )


def test_a_three_minute_spike_in_an_hour_is_not_sustained() -> None:
    ceiling_rules = ["volume-iops-ceiling", "volume-throughput-ceiling", "instance-ebs-bandwidth-bound"]
    findings = advise(_one_hour_spike(), rules=ceiling_rules)
    assert findings == []


def test_a_short_window_lowers_confidence_and_says_why() -> None:
    # 45 of 60 minutes at 3,000 counted IOPS on a 3,000 IOPS gp3: 45 consecutive min >= 30, sustained; the
    # window (1 h) is shorter than a day, so confidence drops by 0.2 from what the same evidence earns in a day.
    def snap(total: int) -> Snapshot:
        return synthetic(
            volume={"type": "gp3", "size_gib": 1000, "iops": 3000, "throughput_mibps": 1000},
            read_iops=plateau(100.0, 3000.0, 45, total=total, at=total - 50),
            read_kib=16.0,
        )

    short = of_rule(advise(snap(60), rules=["volume-iops-ceiling"]), "volume-iops-ceiling")
    day = of_rule(advise(snap(1440), rules=["volume-iops-ceiling"]), "volume-iops-ceiling")
    assert len(short) == len(day) == 1
    assert short[0].confidence == pytest.approx(day[0].confidence - 0.2)
    assert any("shorter than a day" in c for c in short[0].evidence.corroboration)
    assert not any("shorter than a day" in c for c in day[0].evidence.corroboration)
    assert short[0].evidence.longest_run_minutes == 45.0


def _without_periods(snap: Snapshot, periods: list[int]) -> Snapshot:
    """The snapshot with CloudWatch delivering no datapoint for some of the instance's 5-minute periods."""
    series = []
    for s in snap.series:
        if s.entity.kind == "instance":
            values = list(s.values)
            for p in periods:
                values[p] = None
            s = s.model_copy(update={"values": values})
        series.append(s)
    return snap.model_copy(update={"series": series})


@pytest.mark.parametrize(
    ("missing", "longest", "time_at", "episodes"),
    [
        # One missing period (01:15-01:20) inside 40 pinned minutes (01:00-01:40): the run is not split. Its
        # length is the 40 minutes in time; time at the limit counts the 35 observed minutes (7 periods x 5).
        ([15], 40.0, 35.0, 1),
        # Two missing periods (10 minutes) are more than one period: the run ends. 01:00-01:15 and 01:25-01:40
        # are two runs of 15 minutes; 30 observed minutes at the limit.
        ([15, 16], 15.0, 30.0, 2),
    ],
)
def test_a_missing_period_inside_a_run_does_not_split_it(
    missing: list[int], longest: float, time_at: float, episodes: int
) -> None:
    # docs/thresholds/sustained.md: a hole of at most one 5-minute CloudWatch period, with the condition on both
    # sides, is bridged (CloudWatch alarms' "treat missing data" choice); a longer hole ends the run.
    snap = _without_periods(aws_shaped("m5.4xlarge", plateau(100.0, M5_4XL_MIBPS, 40, total=180, at=60)), missing)
    found = of_rule(advise(snap), "instance-ebs-bandwidth-bound")
    assert len(found) == 1
    evidence = found[0].evidence
    assert evidence.longest_run_minutes == longest
    assert evidence.episodes == episodes
    assert next(m for m in evidence.measures if m.unit == "min").value == time_at
