"""volume-iops-ceiling and volume-throughput-ceiling: scenario, synthetic near misses, proposed values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from advisor_fixtures import aws_findings, of_rule, plateau, scenario_findings, scenario_snapshot, synthetic
from headroom.domain.advisor import advise
from headroom.domain.advisor.rules._common import CLIPPED_DEMAND_FACTOR, TARGET_UTILISATION

GP3_3000 = {"type": "gp3", "size_gib": 2000, "iops": 3000, "throughput_mibps": 250}


def _iops_findings(snapshot):  # type: ignore[no-untyped-def]
    return of_rule(advise(snapshot, rules=["volume-iops-ceiling"]), "volume-iops-ceiling")


def test_iops_scenario_fires_on_every_data_volume_with_the_gp3_ceiling() -> None:
    snap = scenario_snapshot("volume-iops-ceiling")
    found = of_rule(scenario_findings("volume-iops-ceiling"), "volume-iops-ceiling")
    data_volumes = {v.id for v in snap.volumes if v.role == "data"}
    assert {f.entity.id for f in found} == data_volumes  # raft volumes (20 GiB gp3) stay quiet
    for f in found:
        ceiling = f.evidence.measures[0]
        assert ceiling.limit == 3000.0  # docs/reference/ebs-volume-types.md#limits-per-volume-type: gp3 includes 3,000 IOPS
        assert (
            f.severity == "critical"
        )  # VolumeIOPSExceededCheck and a > 10 ms latency jump confirm (docs/reference/pingcap-guidance.md#ebs-latency-at-the-limits)
        assert any("VolumeIOPSExceededCheck" in c for c in f.evidence.corroboration)
        assert f.evidence.longest_run_minutes is not None and f.evidence.longest_run_minutes >= 30
        # proposal: round_up(max(p99 / 0.75, peak × 1.25), 500), at least PingCAP's 4,000 (docs/reference/pingcap-guidance.md#aws-deployment)
        p99, peak = f.evidence.measures[0].value, f.evidence.measures[1].value
        need = max(p99 / TARGET_UTILISATION, peak * CLIPPED_DEMAND_FACTOR)
        expected = max(4000, math.ceil(need / 500 - 1e-3) * 500)
        changes = {c.key: c for c in f.changes}
        assert changes["volume.iops"].current == 3000
        assert changes["volume.iops"].proposed == expected
        assert "volume.type" not in changes  # stays gp3: raising IOPS is the cheapest in-place fix
        # cost: (IOPS − 3,000) × $0.005 per IOPS-month (docs/reference/ebs-prices.md#prices-us-east-1); throughput unchanged at 250
        assert f.impact.monthly_cost_delta_usd == pytest.approx((expected - 3000) * 0.005)
        labels = [o.label for o in f.options]
        assert any(label.startswith("io2") for label in labels)
        assert any(label.startswith("RAID 0") for label in labels)
        assert f.options[-1].label.startswith("RAID 0")  # a rebuild is never ranked before in-place fixes


@pytest.mark.parametrize(
    ("name", "base", "level", "minutes", "fires"),
    [
        ("89% of the ceiling all afternoon", 1500.0, 2670.0, 600, False),  # 2,670 / 3,000 = 89%
        ("91% for 40 minutes", 1500.0, 2730.0, 40, True),  # >= 30 consecutive minutes
        ("91% for a 20-minute spike", 1500.0, 2730.0, 20, False),  # brief: < 30 min and < 5% of 24 h
        ("91% for 29 minutes", 1500.0, 2730.0, 29, False),
        ("91% all day", 2730.0, 2730.0, 0, True),
    ],
)
def test_iops_threshold_and_duration(name: str, base: float, level: float, minutes: int, fires: bool) -> None:
    snap = synthetic(volume=GP3_3000, read_iops=plateau(base, level, minutes))
    assert bool(_iops_findings(snap)) is fires, name


def test_repeated_short_runs_add_up_to_sustained() -> None:
    # 20-minute runs every 2 hours = 240 min = 16.7% of the day >= 5% (rules/_common.py SUSTAINED_MIN_SHARE)
    series = np.full(1440, 1500.0)
    for start in range(0, 1440, 120):
        series[start : start + 20] = 2730.0
    found = _iops_findings(synthetic(volume=GP3_3000, read_iops=series))
    assert len(found) == 1
    assert found[0].evidence.episodes == 12
    assert found[0].evidence.longest_run_minutes == 20


def test_iops_are_counted_in_256_kib_chunks() -> None:
    # docs/reference/ebs-io-accounting.md#io-size-cap: a 1 MiB SSD I/O counts as 4. io2 at 4,000 IOPS allows 4,000 × 0.256 = 1,024 MiB/s (docs/reference/ebs-volume-types.md#limits-per-volume-type):
    # 910 issued IOPS of 1 MiB = 3,640 counted IOPS (91% of 4,000) but only 910 MiB/s (88.9% of 1,024).
    vol = {"type": "io2", "size_gib": 2000, "iops": 4000}
    snap = synthetic(volume=vol, read_iops=np.full(1440, 910.0), read_kib=1024.0)
    found = advise(snap, rules=["volume-iops-ceiling", "volume-throughput-ceiling"])
    assert [f.rule for f in found] == ["volume-iops-ceiling"]
    assert found[0].evidence.measures[0].value == pytest.approx(3640.0)


def test_severity_needs_corroboration() -> None:
    flat = np.full(1440, 2800.0)
    plain = _iops_findings(synthetic(volume=GP3_3000, read_iops=flat))[0]
    assert plain.severity == "warning"  # 93% of the ceiling, no exceeded check, no latency series
    checked = _iops_findings(
        synthetic(
            volume=GP3_3000,
            read_iops=flat,
            extra_volume_series={"ebs.iops_exceeded_check": np.ones(1440)},
        )
    )[0]
    assert checked.severity == "critical"
    assert checked.confidence > plain.confidence


def test_throughput_scenario_gp3_and_small_gp2() -> None:
    found = of_rule(scenario_findings("volume-throughput-ceiling"), "volume-throughput-ceiling")
    snap = scenario_snapshot("volume-throughput-ceiling")
    by_type = {snap.volumes[[v.id for v in snap.volumes].index(f.entity.id)].type: f for f in found}
    gp3 = by_type["gp3"]
    assert gp3.evidence.measures[0].limit == 125.0  # docs/reference/ebs-volume-types.md#limits-per-volume-type: 125 MiB/s included
    # The chart names its series (it was titled "MiB/s (MiB/s)") and its line is the table's limit
    chart = next(s for s in gp3.evidence.series if s.metric == "derived.mibps")
    assert chart.label == "throughput"
    assert [(line.value, line.label) for line in chart.reference_lines] == [
        (125.0, gp3.evidence.measures[0].limit_label),
        (112.5, "90% of ceiling"),
    ]
    tput = {c.key: c for c in gp3.changes}["volume.throughput"]
    # PingCAP's gp3 figure for TiKV is 400 MiB/s (docs/reference/pingcap-guidance.md#aws-deployment), but the node is an m6i.2xlarge that
    # sustains 312.5 MB/s = 298 MiB/s of EBS (docs/reference/ec2-ebs-limits.md#limits-table): the fix is sized to what the node can use,
    # 298 rounded up to the 25 MiB/s step = 300 MiB/s, and says so. (The old assertion was proposed >= 400.)
    assert tput.current == 125.0 and tput.proposed == 300.0
    assert any("sized to what the instance can carry" in n for n in gp3.options[0].notes)
    gp2 = by_type["gp2"]
    assert "cannot sustain 250 MiB/s" in gp2.title
    sustained = [m for m in gp2.evidence.measures if m.label.startswith("gp2 sustained")][0]
    assert sustained.value == pytest.approx(225.0)  # docs/reference/gp2-burst.md#gp2-throughput: 300 GiB × 3 IOPS × 256 KiB = 225 MiB/s
    assert {c.key: c.proposed for c in gp2.changes}["volume.type"] == "gp3"
    # The peak is judged against the 250 MiB/s burst (gp2 170-334 GiB, docs/reference/gp2-burst.md#gp2-throughput): drawn and named
    peak = next(m for m in gp2.evidence.measures if m.label == "peak")
    lines = next(s for s in gp2.evidence.series if s.metric == "derived.mibps").reference_lines
    assert (peak.limit, peak.limit_label) == (250.0, "burst ceiling, while credits last")
    assert [(line.value, line.label) for line in lines] == [
        (225.0, "current ceiling"),
        (202.5, "90% of ceiling"),
        (250.0, "burst ceiling, while credits last"),
    ]


def test_gp2_under_334_gib_at_its_sustained_throughput() -> None:
    # BurstBalance 0: ceiling is the sustained 225 MiB/s (docs/reference/gp2-burst.md#gp2-throughput); 220 MiB/s of 256 KiB reads is 97.8% of it.
    snap = synthetic(
        volume={"type": "gp2", "size_gib": 300},
        read_iops=np.full(1440, 880.0),
        read_kib=256.0,
        extra_volume_series={"ebs.burst_balance": np.zeros(1440)},
    )
    found = of_rule(advise(snap, rules=["volume-throughput-ceiling"]), "volume-throughput-ceiling")
    assert len(found) == 1
    assert found[0].evidence.measures[0].limit == pytest.approx(225.0)


@pytest.mark.parametrize("scenario", ["healthy", "near-miss-volume-iops-89pct", "near-miss-brief-spike"])
def test_silent_on_healthy_and_near_misses(scenario: str) -> None:
    found = aws_findings(scenario_findings(scenario))
    assert not of_rule(found, "volume-iops-ceiling") and not of_rule(found, "volume-throughput-ceiling")


def test_brief_spike_scenario_really_touches_the_ceiling() -> None:
    from headroom.domain.advisor.context import Context

    snap = scenario_snapshot("near-miss-brief-spike")
    ctx = Context(snap)
    data = [v for v in snap.volumes if v.role == "data"][0]
    view = ctx.volume_io(data.id)
    assert view is not None
    assert np.nanmax(view.counted_iops) >= 0.9 * 3000  # the spike reaches the 90% band ...
    assert np.count_nonzero(view.counted_iops >= 0.9 * 3000) < 30  # ... for less than 30 minutes


@pytest.mark.parametrize(("fraction", "fires"), [(0.89, False), (0.91, True)])
def test_throughput_threshold(fraction: float, fires: bool) -> None:
    # gp3 at 250 MiB/s provisioned (docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025); 256 KiB reads at fraction × 250 MiB/s all day
    vol = {"type": "gp3", "size_gib": 1000, "iops": 3000, "throughput_mibps": 250}
    snap = synthetic(volume=vol, read_iops=np.full(1440, fraction * 250 * 4), read_kib=256.0)
    found = of_rule(advise(snap, rules=["volume-throughput-ceiling"]), "volume-throughput-ceiling")
    assert bool(found) is fires
