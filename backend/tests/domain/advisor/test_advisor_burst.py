"""gp2-burst-depletion: forecast, proposed gp3 at equal or better performance, cost delta, near miss."""

from __future__ import annotations

import re

import numpy as np
import pytest
from advisor_fixtures import aws_findings, of_rule, scenario_findings, scenario_snapshot, synthetic
from headroom.domain.advisor import advise
from headroom.domain.physics.burst import gp2_seconds_to_empty


def test_full_bucket_formula_matches_domain_table() -> None:
    # docs/reference/gp2-burst.md#worked-durations table: 500 GiB gp2 (1,500 baseline) at 3,000 IOPS lasts 5.4e6 / 1,500 = 3,600 s (docs/reference/gp2-burst.md#burst-time-from-cloudwatch)
    assert gp2_seconds_to_empty(500, 3000) == pytest.approx(3600.0)
    assert gp2_seconds_to_empty(100, 3000) == pytest.approx(2000.0)


def test_scenario_fires_with_forecast_and_gp3_fix() -> None:
    found = of_rule(scenario_findings("gp2-burst-depletion"), "gp2-burst-depletion")
    snap = scenario_snapshot("gp2-burst-depletion")
    assert {f.entity.id for f in found} == {v.id for v in snap.volumes if v.type == "gp2"}
    for f in found:
        measures = {m.label: m for m in f.evidence.measures}
        assert measures["drain-period demand p95"].limit == 1500.0  # 3 IOPS/GiB × 500 GiB (docs/reference/gp2-burst.md#baseline-and-burst)
        assert measures["burst ceiling"].value == 3000.0
        assert f.severity == "critical"  # hours at 0%: the volume ran at its baseline
        demand = measures["drain-period demand p95"].value
        expected_min = 5.4e6 / (min(demand, 3000.0) - 1500.0) / 60.0
        # written as every duration is (units.format_duration_words): "3 h 27 min", "50 min"
        match = re.search(
            r"a full bucket \(5.4 M credits\) lasts (?:(\d+) h )?(\d+) min", " ".join(f.evidence.corroboration)
        )
        assert match is not None
        assert 60 * int(match.group(1) or 0) + int(match.group(2)) == pytest.approx(expected_min, abs=1)
        changes = {c.key: c.proposed for c in f.changes}
        # gp3 at equal or better: 3,000 IOPS (gp2's burst) and 250 MiB/s (gp2's max at 500 GiB, docs/reference/gp2-burst.md#gp2-throughput)
        assert changes == {"volume.type": "gp3", "volume.iops": 3000, "volume.throughput": 250.0}
        # docs/reference/ebs-prices.md#worked-example worked check: 500 GiB gp3 at 3,000 IOPS / 250 MiB/s = $45.00; gp2 500 GiB = $50.00
        assert f.impact.monthly_cost_before_usd == pytest.approx(50.0)
        assert f.impact.monthly_cost_after_usd == pytest.approx(45.0)
        assert f.impact.monthly_cost_delta_usd == pytest.approx(-5.0)


def test_supersedes_iops_ceiling_and_cost_findings_on_the_same_volume() -> None:
    findings = scenario_findings("gp2-burst-depletion")
    burst = {f.entity.id for f in of_rule(findings, "gp2-burst-depletion")}
    for rule in ("volume-iops-ceiling", "gp2-to-gp3"):
        assert not {f.entity.id for f in of_rule(findings, rule)} & burst


@pytest.mark.parametrize(
    ("low_pct", "fires"),
    [(11.0, False), (10.0, True), (0.0, True), (55.0, False)],  # Headroom threshold: BurstBalance <= 10%
)
def test_balance_threshold(low_pct: float, fires: bool) -> None:
    balance = np.full(1440, 100.0)
    balance[700:760] = low_pct
    snap = synthetic(
        volume={"type": "gp2", "size_gib": 500},
        read_iops=np.full(1440, 1200.0),
        extra_volume_series={"ebs.burst_balance": balance},
    )
    assert bool(of_rule(advise(snap, rules=["gp2-burst-depletion"]), "gp2-burst-depletion")) is fires


@pytest.mark.parametrize("scenario", ["healthy", "near-miss-gp2-burst-half", "gp2-to-gp3"])
def test_silent(scenario: str) -> None:
    assert not of_rule(aws_findings(scenario_findings(scenario)), "gp2-burst-depletion")


def test_the_forecast_is_typed_in_the_evidence() -> None:
    from headroom.domain.advisor.context import Context
    from headroom.domain.forecast.burst import forecast_gp2_burst

    snap = scenario_snapshot("gp2-burst-depletion")
    ctx = Context(snap)
    found = of_rule(scenario_findings("gp2-burst-depletion"), "gp2-burst-depletion")
    assert found
    for f in found:
        vol = next(v for v in snap.volumes if v.id == f.entity.id)
        bal, view = ctx.series("volume", vol.id, "ebs.burst_balance"), ctx.volume_io(vol.id)
        assert bal is not None and view is not None
        fc = forecast_gp2_burst(bal, view.counted_iops, size_gib=vol.size_gib, step_seconds=ctx.step_seconds,
                                now=ctx.now)
        empties, *rest = f.evidence.forecasts
        # what headroom.domain.forecast.burst says, field by field; once empty the volume serves its 1,500 IOPS
        # baseline (3 IOPS/GiB × 500 GiB, docs/reference/gp2-burst.md#baseline-and-burst)
        assert (empties.kind, empties.label, empties.unit) == ("burst_empty", "Burst balance", "IOPS")
        assert (empties.within_seconds, empties.at, empties.value) == (fc.seconds_to_empty, fc.empties_at, 1500.0)
        assert (empties.demand, empties.balance_pct, empties.method) == (fc.demand, fc.balance_percent, fc.method)
        assert [r.kind for r in rest] == (["refill"] if fc.refill_seconds is not None else [])
        # no forecast is written as text any more; the corroboration keeps the full-bucket arithmetic
        assert not any(c.startswith(("forecast", "refill at", "the bucket is empty")) for c in f.evidence.corroboration)


def test_the_chart_names_the_baseline_the_finding_was_judged_by() -> None:
    # The drain-period demand is judged against the baseline (the table's limit); the 3,000 IOPS burst is drawn
    # too, and each line says which it is (500 GiB gp2: 1,500 IOPS baseline, AWS General Purpose SSD volumes).
    for f in of_rule(scenario_findings("gp2-burst-depletion"), "gp2-burst-depletion"):
        demand = next(m for m in f.evidence.measures if m.label == "drain-period demand p95")
        iops = next(s for s in f.evidence.series if s.metric == "derived.counted_iops")
        assert [(line.value, line.label) for line in iops.reference_lines] == [
            (demand.limit, f"{demand.limit_label}, the finding's limit"),
            (3000.0, "gp2 burst, while credits last"),
        ]
        assert demand.limit == 1500.0


def test_no_drain_period_reports_no_demand_rather_than_zero() -> None:
    # The bucket ran low while the volume stayed under its 1,500 IOPS baseline (3 IOPS/GiB x 500 GiB, AWS gp2:
    # https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html): there was no drain period, so there
    # is no drain-period demand. A missing number is left out, never stored as a "0 IOPS demand".
    balance = np.full(1440, 100.0)
    balance[700:760] = 0.0
    snap = synthetic(
        volume={"type": "gp2", "size_gib": 500},
        read_iops=np.full(1440, 1200.0),
        extra_volume_series={"ebs.burst_balance": balance},
    )
    (finding,) = of_rule(advise(snap, rules=["gp2-burst-depletion"]), "gp2-burst-depletion")
    labels = [m.label for m in finding.evidence.measures]
    assert "drain-period demand p95" not in labels
    assert not [m for m in finding.evidence.measures if m.unit == "IOPS" and m.value == 0]
    assert "burst ceiling" in labels  # the rest of the evidence is there
