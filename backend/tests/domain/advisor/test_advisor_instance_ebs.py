"""instance-ebs-bandwidth-bound and instance-ebs-burst-depletion on simulated scenarios."""

from __future__ import annotations

import re

import numpy as np
import pytest
from advisor_fixtures import aws_findings, of_rule, scenario_findings, scenario_snapshot
from headroom.domain.catalog import instance_limits
from headroom.domain.physics.burst import InstanceEbsBucket


@pytest.mark.parametrize(
    ("scenario", "current", "proposed"),
    [
        # docs/reference/pingcap-guidance.md#instance-ebs-bandwidth: "After we switched EC2 instances [m5.2xlarge -> m5.4xlarge], the performance doubled";
        # m5.2xlarge sustains 2,300 Mbps = 274 MiB/s, m5.4xlarge 4,750 Mbps = 566 MiB/s (docs/reference/ec2-ebs-limits.md#limits-table).
        ("pingcap-aws-m5-2xlarge-io1", "m5.2xlarge", "m5.4xlarge"),
        # m5.4xlarge pinned at 566 MiB/s; m5.8xlarge sustains 6,800 Mbps = 850 MB/s = 810.6 MiB/s (docs/reference/ec2-ebs-limits.md#limits-table).
        ("instance-ebs-bandwidth-bound", "m5.4xlarge", "m5.8xlarge"),
    ],
)
def test_bandwidth_bound_recommends_the_next_size(scenario: str, current: str, proposed: str) -> None:
    found = of_rule(scenario_findings(scenario), "instance-ebs-bandwidth-bound")
    snap = scenario_snapshot(scenario)
    assert {f.entity.id for f in found} == {i.id for i in snap.instances}
    cur, new = instance_limits(current), instance_limits(proposed)
    for f in found:
        (change,) = f.changes
        assert (change.key, change.current, change.proposed) == ("instance.type", current, proposed)
        assert change.online is False
        limit = f.evidence.measures[0].limit
        assert limit == pytest.approx(cur.baseline_throughput_mibps)  # MB/s → MiB/s (docs/reference/ec2-ebs-limits.md#units)
        need = f.evidence.measures[2].value
        assert new.baseline_throughput_mibps >= need  # clears the demand with margin
        assert f.impact.monthly_cost_delta_usd == pytest.approx(
            round((new.hourly_price_usd - cur.hourly_price_usd) * 730, 2)  # type: ignore[operator]
        )
        assert f.severity == "critical"


def test_bandwidth_bound_m5_2xlarge_numbers() -> None:
    f = of_rule(scenario_findings("pingcap-aws-m5-2xlarge-io1"), "instance-ebs-bandwidth-bound")[0]
    # docs/reference/ec2-ebs-limits.md#limits-table: 2,300 Mbps / 8 = 287.5 MB/s = 274.2 MiB/s baseline, 4,750 Mbps = 566.2 MiB/s maximum
    assert f.evidence.measures[0].limit == pytest.approx(287.5e6 / 2**20)
    assert f.evidence.measures[1].limit == pytest.approx(593.75e6 / 2**20)
    assert f.evidence.share_of_window is not None and f.evidence.share_of_window > 0.25


def test_burst_depletion_forecast_and_fix() -> None:
    found = of_rule(scenario_findings("instance-ebs-burst-depletion"), "instance-ebs-burst-depletion")
    snap = scenario_snapshot("instance-ebs-burst-depletion")
    assert {f.entity.id for f in found} == {i.id for i in snap.instances}
    bucket = InstanceEbsBucket.for_throughput(instance_limits("m6i.xlarge"))
    for f in found:
        assert f.severity == "critical"  # more than 30 minutes at the baseline
        measures = {m.label: m for m in f.evidence.measures}
        assert measures["minimum instance EBS throughput burst balance"].value == 0.0
        demand = measures["drain-period demand p95"].value
        # the forecast: capacity / (demand − baseline) with the physics bucket (30 min × (max − base), docs/reference/ec2-ebs-limits.md#the-burst-rule)
        minutes = bucket.capacity / (demand - bucket.baseline_rate) / 60
        text = " ".join(f.evidence.corroboration)
        # written as every duration is (units.format_duration_words): "2 h 5 min", "50 min"
        match = re.search(r"a full bucket lasts (?:(\d+) h )?(\d+) min", text)
        assert match is not None
        assert 60 * int(match.group(1) or 0) + int(match.group(2)) == pytest.approx(minutes, abs=1.0)
        assert f"baseline {bucket.baseline_rate:,.0f} MiB/s" in text
        (change,) = f.changes
        # m6i.2xlarge sustains 312.5 MB/s = 298 MiB/s, below the ~400 MiB/s burst demand; m6i.4xlarge 596 MiB/s
        assert (change.key, change.proposed) == ("instance.type", "m6i.4xlarge")


@pytest.mark.parametrize("scenario", ["healthy", "near-miss-instance-burst-half", "volume-iops-ceiling"])
def test_instance_rules_silent(scenario: str) -> None:
    found = aws_findings(scenario_findings(scenario))
    assert not [f for f in found if f.rule.startswith("instance-ebs")]


def test_near_miss_instance_balance_really_dips() -> None:
    from headroom.domain.advisor.context import Context

    snap = scenario_snapshot("near-miss-instance-burst-half")
    ctx = Context(snap)
    bal = ctx.series("instance", snap.instances[0].id, "ec2.ebs_byte_balance")
    assert bal is not None and 10.0 < float(np.nanmin(bal)) < 90.0


# m5.2xlarge: 2,300 Mbps = 287.5 MB/s = 274.18 MiB/s sustained (docs/reference/ec2-ebs-limits.md#limits-table). Balance series at 0%: the
# instance is held at its baseline all day (a pinned share of 100% is "too small", not a burst story).
M5_2XL_BASE_MIBPS = 287.5e6 / 2**20


@pytest.mark.parametrize(
    ("fraction", "volume", "fires"),
    [
        (0.89, {"type": "gp3", "size_gib": 1000, "iops": 4000, "throughput_mibps": 1000}, False),  # near miss
        (0.99, {"type": "gp3", "size_gib": 1000, "iops": 4000, "throughput_mibps": 1000}, True),
        # the volume itself is at >= 90% of its 300 MiB/s: a volume finding, not an instance one
        (0.99, {"type": "gp3", "size_gib": 1000, "iops": 3000, "throughput_mibps": 300}, False),
    ],
)
def test_bandwidth_bound_synthetic(fraction: float, volume: dict[str, object], fires: bool) -> None:
    from advisor_fixtures import synthetic
    from headroom.domain.advisor import advise

    mibps = fraction * M5_2XL_BASE_MIBPS
    snap = synthetic(
        volume=volume,
        read_iops=np.full(1440, mibps * 4),  # 256 KiB reads: 4 per MiB
        read_kib=256.0,
        instance_type="m5.2xlarge",
        instance_series={"ec2.ebs_byte_balance": np.zeros(1440), "ec2.ebs_io_balance": np.full(1440, 100.0)},
    )
    found = of_rule(advise(snap, rules=["instance-ebs-bandwidth-bound"]), "instance-ebs-bandwidth-bound")
    assert bool(found) is fires
    if fires:
        assert found[0].changes[0].proposed == "m5.4xlarge"


def test_alternative_instance_options_keep_cpu_memory_and_clear_the_need() -> None:
    f = of_rule(scenario_findings("pingcap-aws-m5-2xlarge-io1"), "instance-ebs-bandwidth-bound")[0]
    cur = instance_limits("m5.2xlarge")
    need = f.evidence.measures[2].value
    assert f.options[0].changes == f.changes  # the same-family size is the primary change
    for option in f.options:
        alt = instance_limits(str(option.changes[0].proposed))
        assert (alt.vcpus or 0) >= (cur.vcpus or 0) and (alt.memory_gib or 0) >= (cur.memory_gib or 0)
        assert alt.baseline_throughput_mibps >= need
    priced = [o for o in f.options[1:] if o.impact.monthly_cost_after_usd is not None]
    assert priced == sorted(priced, key=lambda o: o.impact.monthly_cost_after_usd or 0.0)


def test_burst_depletion_forecast_is_typed() -> None:
    found = of_rule(scenario_findings("instance-ebs-burst-depletion"), "instance-ebs-burst-depletion")
    bucket = InstanceEbsBucket.for_throughput(instance_limits("m6i.xlarge"))
    assert found
    for f in found:
        empties, refill = f.evidence.forecasts
        assert (empties.kind, empties.label, empties.unit, empties.source) == (
            "burst_empty", "Instance EBS throughput burst balance", "MiB/s",
            # A public document, not the module name "headroom.domain.forecast.burst"
            "AWS: Amazon EBS-optimized instances, burst sizes: maximum for 30 minutes at least once every 24 hours "
            "(https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ebs-optimized.html)")
        # m6i.xlarge falls back to its 156.25 MB/s = 149 MiB/s baseline (docs/reference/ec2-ebs-limits.md#limits-table)
        assert empties.value == pytest.approx(bucket.baseline_rate)
        # at the window's end the demand is under that baseline: not draining, and the bucket refills from the
        # balance now at the off-peak demand, (capacity − balance) / (baseline − demand) (headroom.domain.physics)
        assert empties.within_seconds is None and empties.demand is not None and empties.demand < bucket.baseline_rate
        assert refill.kind == "refill" and refill.demand is not None and empties.balance_pct is not None
        balance = bucket.credits_from_percent(empties.balance_pct)
        assert refill.within_seconds == pytest.approx(bucket.refill_seconds(balance, refill.demand))


# m6g.2xlarge (Graviton, arm64): 2,375 Mbps / 8 = 296.875 MB/s = 283.1 MiB/s sustained (AWS "Amazon
# EBS-optimized instances"); its next size m6g.4xlarge sustains 4,750 Mbps = 593.75 MB/s = 566.2 MiB/s.
M6G_2XL_BASE_MIBPS = 296.875e6 / 2**20


def _arm64_node_pinned() -> list[object]:
    from advisor_fixtures import synthetic
    from headroom.domain.advisor import advise

    mibps = 0.99 * M6G_2XL_BASE_MIBPS
    snap = synthetic(
        volume={"type": "gp3", "size_gib": 1000, "iops": 4000, "throughput_mibps": 1000},
        read_iops=np.full(1440, mibps * 4),
        read_kib=256.0,
        instance_type="m6g.2xlarge",
        instance_series={"ec2.ebs_byte_balance": np.zeros(1440), "ec2.ebs_io_balance": np.full(1440, 100.0)},
    )
    return of_rule(advise(snap, rules=["instance-ebs-bandwidth-bound"]), "instance-ebs-bandwidth-bound")


def test_an_arm64_node_is_offered_arm64_first_with_prices() -> None:
    (f,) = _arm64_node_pinned()
    assert f.changes[0].proposed == "m6g.4xlarge"
    # Both prices are in the catalog: (0.616 - 0.308) $/h x 730 h = +$224.84 a month, us-east-1 on-demand.
    assert f.impact.monthly_cost_delta_usd == pytest.approx(224.84)
    assert f.impact.price_region == "us-east-1"
    assert "+$224.84/month (us-east-1 on-demand)" in f.impact.summary
    archs = [instance_limits(str(o.changes[0].proposed)).architecture for o in f.options]
    assert archs[:2] == ["arm64", "arm64"]  # the same-family size, then the cheapest arm64 alternative
    assert archs == sorted(archs, key=lambda a: a != "arm64")  # any x86_64 option only after every arm64 one
    for option, arch in zip(f.options, archs, strict=True):
        changing = [n for n in option.notes if n.startswith("architecture change")]
        assert bool(changing) is (arch != "arm64")
        assert option.impact.monthly_cost_delta_usd is not None and option.impact.price_region == "us-east-1"


def test_an_x86_node_gets_x86_alternatives_first_and_a_note_on_arm64() -> None:
    f = of_rule(scenario_findings("pingcap-aws-m5-2xlarge-io1"), "instance-ebs-bandwidth-bound")[0]
    archs = [instance_limits(str(o.changes[0].proposed)).architecture for o in f.options]
    assert archs[0] == "x86_64" and archs == sorted(archs, key=lambda a: a != "x86_64")
    for option, arch in zip(f.options, archs, strict=True):
        notes = " ".join(option.notes)
        assert ("architecture change x86_64 -> arm64: TiKV needs arm64 binaries" in notes) is (arch == "arm64")


def test_prices_of_another_region_say_so() -> None:
    from advisor_fixtures import synthetic
    from headroom.domain.advisor import advise

    snap = synthetic(
        volume={"type": "gp3", "size_gib": 1000, "iops": 4000, "throughput_mibps": 1000},
        read_iops=np.full(1440, 0.99 * M5_2XL_BASE_MIBPS * 4),
        read_kib=256.0,
        instance_type="m5.2xlarge",
        instance_series={"ec2.ebs_byte_balance": np.zeros(1440), "ec2.ebs_io_balance": np.full(1440, 100.0)},
    )
    snap = snap.model_copy(update={"cluster": snap.cluster.model_copy(update={"region": "eu-west-1"})})
    (f,) = of_rule(advise(snap, rules=["instance-ebs-bandwidth-bound"]), "instance-ebs-bandwidth-bound")
    assert f.impact.price_region == "us-east-1"
    assert any("prices are us-east-1 on-demand; eu-west-1 prices differ" in n for n in f.options[0].notes)
