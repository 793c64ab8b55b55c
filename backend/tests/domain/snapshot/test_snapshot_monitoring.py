"""The simulator delivers data the way AWS and Prometheus do: CloudWatch periods, missing datapoints, and one
history that later windows continue.

Sources (docs/snapshot.md "Monitoring and missing data"):
- AWS/EC2 EBS metrics: "5-minute with basic monitoring, 1-minute with detailed monitoring"; EBSIOBalance% and
  EBSByteBalance% are basic-monitoring (5-minute) metrics (AWS EC2 CloudWatch metrics page; docs/reference/cloudwatch.md#instance-ebs-metrics).
- AWS/EBS: "All Amazon EBS volume types automatically send 1-minute metrics to CloudWatch, but only when the
  volume is attached"; BurstBalance has no data while the volume is idle (AWS EBS CloudWatch page; docs/reference/cloudwatch.md#volume-metrics).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from headroom.domain.snapshot import views
from headroom.domain.snapshot.scenario import Monitoring, scenario_from_dict
from headroom.domain.snapshot.schema import Series, Snapshot
from headroom.domain.snapshot.simulate import (
    CLOUDWATCH_MISSING_SHARE,
    SCRAPE_MISSING_SHARE,
    SimState,
    simulate,
)

START = datetime(2026, 1, 5, 0, 3, tzinfo=UTC)  # not on a 5-minute boundary on purpose
BASIC = Monitoring(ec2="basic", gaps=False)
DETAILED = Monitoring(ec2="detailed", gaps=False)
MINUTE = Monitoring(ec2="minute")


def fleet(**extra: Any) -> dict[str, Any]:
    """Two m5.2xlarge nodes (burst-capable instance EBS limits) on gp2, plus an attached gp2 volume TiKV never
    touches; a daily write spike drains the buckets."""
    return {
        "cluster": {"name": "mon", "tikv_version": "v8.5.1"},
        "warmup_hours": 2,
        "workload": {"reads_per_sec": 3500, "working_set_gib": 120, "write_mibps": 2,
                     "spikes": [{"at_hour": 2.5, "duration_minutes": 60, "factor": 2, "repeat_every_hours": 6}]},
        "nodes": [{"count": 2, "instance_type": "m5.2xlarge", "volumes": [
            {"role": "data", "type": "gp2", "size_gib": 300, "burst_balance_percent": 40},
            {"role": "other", "type": "gp2", "size_gib": 100},
        ]}],
        **extra,
    }  # fmt: skip


def run(monitoring: Monitoring, hours: float = 6, **kw: Any) -> Snapshot:
    return simulate(
        scenario_from_dict(fleet()), hours=hours, seed=3, start=START, monitoring=monitoring, **kw
    )


def by_key(snap: Snapshot) -> dict[tuple[str, str, tuple[tuple[str, str], ...]], Series]:
    return {(s.entity.id, s.metric, tuple(sorted(s.labels.items()))): s for s in snap.series}


def test_basic_monitoring_sums_ec2_metrics_over_clock_aligned_5_minute_periods() -> None:
    minute, basic = by_key(run(MINUTE)), by_key(run(BASIC))
    instance_keys = [k for k, s in minute.items() if s.entity.kind == "instance"]
    assert instance_keys
    for key in instance_keys:
        one, five = minute[key], basic[key]
        assert one.step_seconds == 60 and five.step_seconds == 300
        # The window starts at 00:03; CloudWatch's periods start on the clock: the first is 00:05-00:10,
        # i.e. minutes 2..6 of the 1-minute series, and 6 h hold 71 whole periods (00:05 ... 05:55).
        assert five.start == datetime(2026, 1, 5, 0, 5, tzinfo=UTC)
        assert len(five.values) == 71
        ones = np.asarray(one.values[2 : 2 + 71 * 5], dtype=float).reshape(71, 5)
        got = np.asarray(five.values, dtype=float)
        if five.statistic == "Sum":
            # EBSReadOps as a 300 s Sum: five 1-minute sums. The 1-minute op counts are each rounded up to a
            # whole op, the 5-minute sum once: they differ by under 5 ops per period.
            assert np.all(np.abs(got - ones.sum(axis=1)) <= 5.0 + 1e-6 * ones.sum(axis=1)), key
        else:  # EBSIOBalance% / EBSByteBalance% with the Minimum statistic: the period's lowest minute
            assert five.statistic == "Minimum"
            assert np.allclose(got, ones.min(axis=1), atol=0.01), key
    # AWS/EBS volume and Prometheus node series stay at 1 minute.
    assert {s.step_seconds for s in basic.values() if s.entity.kind != "instance"} == {60}


def test_detailed_monitoring_keeps_ec2_sums_at_1_minute_but_balances_at_5() -> None:
    snap = run(DETAILED)
    steps = {s.metric: s.step_seconds for s in snap.series if s.entity.kind == "instance"}
    # m5.2xlarge bursts (instance EBS buckets), so both balances exist
    assert steps == {
        "ec2.ebs_read_ops": 60, "ec2.ebs_write_ops": 60, "ec2.ebs_read_bytes": 60, "ec2.ebs_write_bytes": 60,
        "ec2.ebs_io_balance": 300, "ec2.ebs_byte_balance": 300,
    }  # fmt: skip


def test_missing_datapoints_as_cloudwatch_and_prometheus_have_them() -> None:
    hours = 24
    snap = run(Monitoring(ec2="detailed"), hours=hours)
    minutes = hours * 60
    # An idle attached gp2 volume: BurstBalance is absent ("no data when the volume is idle") while its 1-minute
    # ops are reported (as 0).
    idle = [v.id for v in snap.volumes if v.role == "other"]
    for vid in idle:
        balance = views.find_series(snap, "volume", vid, "ebs.burst_balance")
        assert balance is not None and all(v is None for v in balance.values)
        ops = views.find_series(snap, "volume", vid, "ebs.read_ops")
        assert ops is not None and {v for v in ops.values if v is not None} == {0.0}
    # Missed minutes: 0.2 % of a volume's CloudWatch minutes, 0.5 % of a node's scrapes; each miss takes every
    # series of that entity at that minute. Over 2 nodes x 1,440 minutes expect ~14 missed scrapes, ~6 missed
    # volume minutes on the 2 busy volumes; allow a wide band (the draw is random but fixed).
    node_missing = {
        n.id: {i for s in snap.series if s.entity.id == n.id for i, v in enumerate(s.values) if v is None}
        for n in snap.nodes
    }
    total_node = sum(len(m) for m in node_missing.values())
    assert 0 < total_node <= 4 * SCRAPE_MISSING_SHARE * minutes * len(snap.nodes)
    for node in snap.nodes:
        for s in snap.series:
            if s.entity.id == node.id:  # the same minutes for every series of the node
                assert {i for i, v in enumerate(s.values) if v is None} == node_missing[node.id]
    busy = [v.id for v in snap.volumes if v.role == "data"]
    vol_missing = sum(
        v is None for s in snap.series if s.entity.id in busy and s.metric == "ebs.read_ops" for v in s.values
    )
    assert 0 < vol_missing <= 4 * CLOUDWATCH_MISSING_SHARE * minutes * len(busy)
    # The gaps are a function of the clock: a window that overlaps misses the same minutes.
    later = simulate(
        scenario_from_dict(fleet()), hours=2, seed=3, start=START + timedelta(hours=10),
        monitoring=Monitoring(ec2="detailed"),
    )  # fmt: skip
    for node in snap.nodes:
        a = views.find_series(snap, "node", node.id, "tikv.cpu")
        b = views.find_series(later, "node", node.id, "tikv.cpu")
        assert a is not None and b is not None
        assert [v is None for v in a.values[600:720]] == [v is None for v in b.values]


def test_a_window_given_the_state_continues_the_history() -> None:
    """Two pieces of one history: the second starts from the state the first reports at its end."""
    scenario = scenario_from_dict(fleet())
    whole = simulate(scenario, hours=4, seed=3, start=START, monitoring=MINUTE)
    cut = START + timedelta(hours=3)

    def last(entity: str, metric: str, before: datetime) -> float:
        s = views.find_series(whole, "volume" if metric.startswith("ebs.") else
                              "instance" if metric.startswith("ec2.") else "node", entity, metric)  # fmt: skip
        assert s is not None
        value = s.values[int((before - s.start).total_seconds()) // s.step_seconds - 1]
        assert value is not None
        return float(value)

    state = SimState(
        volume_balance_pct={
            v.id: last(v.id, "ebs.burst_balance", cut) for v in whole.volumes if v.role == "data"
        },
        instance_io_balance_pct={i.id: last(i.id, "ec2.ebs_io_balance", cut) for i in whole.instances},
        instance_byte_balance_pct={i.id: last(i.id, "ec2.ebs_byte_balance", cut) for i in whole.instances},
        pending_compaction_bytes={
            n.id: last(n.id, "tikv.pending_compaction_bytes", cut) for n in whole.nodes
        },
    )
    piece = simulate(scenario, hours=1, seed=3, start=cut, origin=START, state=state, monitoring=MINUTE)
    tail = by_key(whole)
    drained = False
    for key, s in by_key(piece).items():
        ref = tail[key].values[180:240]
        got = s.values
        assert len(got) == len(ref) == 60
        a, b = np.asarray(got, dtype=float), np.asarray(ref, dtype=float)
        # The balances come back rounded to 0.01 %, so the piece differs from the whole by that much of a bucket
        # at most; everything else follows from the same demand (growth, spikes and noise share the origin).
        assert np.allclose(a, b, rtol=2e-3, atol=0.02), (key, a[:3], b[:3])
        moving = s.metric in ("ebs.burst_balance", "ec2.ebs_io_balance", "ec2.ebs_byte_balance")
        drained |= moving and float(np.nanmax(b) - np.nanmin(b)) > 5.0
    assert drained  # the test exercises moving buckets, not full ones
