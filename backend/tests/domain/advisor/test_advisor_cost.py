"""gp2-to-gp3 and volume-overprovisioned: prices from docs/reference/ebs-prices.md#prices-us-east-1."""

from __future__ import annotations

import math

import numpy as np
import pytest
from advisor_fixtures import aws_findings, of_rule, scenario_findings, synthetic, with_history
from headroom.domain.advisor import advise


def test_gp2_to_gp3_scenario() -> None:
    found = of_rule(scenario_findings("gp2-to-gp3"), "gp2-to-gp3")
    assert len(found) == 3
    for f in found:
        assert f.severity == "info"
        peak_mibps = f.evidence.measures[1].value
        # 1,500 GiB gp2 = $150/month (docs/reference/ebs-prices.md#prices-us-east-1 $0.10/GB-month)
        assert f.impact.monthly_cost_before_usd == pytest.approx(150.0)
        changes = {c.key: c.proposed for c in f.changes}
        tput = max(125.0, math.ceil(peak_mibps / 0.75 / 25 - 1e-3) * 25)
        assert changes["volume.type"] == "gp3"
        assert changes["volume.iops"] == 3000  # the peak (~1,000-1,500 IOPS) fits the free 3,000 with margin
        # gp3: 1,500 × $0.08 + (throughput − 125) × $0.04 (docs/reference/ebs-prices.md#prices-us-east-1)
        assert f.impact.monthly_cost_after_usd == pytest.approx(120.0 + (tput - 125.0) * 0.04)
        # the "equal performance" option: 4,500 IOPS / 250 MiB/s = 120 + 7.5 + 5 = $132.50 (scenario comment)
        assert any(o.impact.monthly_cost_after_usd == pytest.approx(132.5) for o in f.options)


def test_volume_overprovisioned_scenario() -> None:
    found = of_rule(scenario_findings("volume-overprovisioned"), "volume-overprovisioned")
    assert len(found) == 3
    for f in found:
        # io2 2,000 GiB × $0.125 + 20,000 IOPS × $0.065 = 250 + 1,300 = $1,550 (docs/reference/ebs-prices.md#prices-us-east-1)
        assert f.impact.monthly_cost_before_usd == pytest.approx(1550.0)
        # gp3 2,000 GiB with the free 3,000 IOPS / 125 MiB/s = $160 (docs/reference/ebs-prices.md#prices-us-east-1)
        assert f.impact.monthly_cost_after_usd == pytest.approx(160.0)
        assert f.impact.monthly_cost_delta_usd == pytest.approx(-1390.0)
        assert any("99.999%" in n for n in f.notes)  # io2 durability (docs/reference/pingcap-guidance.md#volume-choice-on-aws)


@pytest.mark.parametrize(
    ("iops", "throughput", "fires"),
    [
        (6000, 250.0, False),  # $116 now, $96 at 3,000/125: saves $20 = 17% < 20%
        (3500, 125.0, False),  # saves $2.50 < $10
        (8000, 500.0, True),  # $136 now: saves $40 = 29%
        (16000, 1000.0, True),
    ],
)
def test_overprovisioned_thresholds(iops: int, throughput: float, fires: bool) -> None:
    # 1,200 GiB gp3 (= $96 storage), peak 1,000 IOPS of 16 KiB: fits the free 3,000 / 125 at <= 75%.
    snap = with_history(
        synthetic(
            volume={"type": "gp3", "size_gib": 1200, "iops": iops, "throughput_mibps": throughput},
            read_iops=np.full(1440, 1000.0),
        )
    )
    found = of_rule(advise(snap, rules=["volume-overprovisioned"]), "volume-overprovisioned")
    cost_now = 96 + (iops - 3000) * 0.005 + (throughput - 125) * 0.04
    saving = cost_now - 96
    assert (saving >= 10 and saving >= 0.2 * cost_now) is fires
    assert bool(found) is fires


@pytest.mark.parametrize("scenario", ["healthy", "volume-iops-ceiling"])
def test_cost_rules_silent(scenario: str) -> None:
    found = aws_findings(scenario_findings(scenario))
    assert not of_rule(found, "gp2-to-gp3") and not of_rule(found, "volume-overprovisioned")


def test_no_cost_cut_under_an_instance_pinned_at_its_limit() -> None:
    # block-size.yaml: io2 at 20,000 IOPS behind an m5.4xlarge pinned at 566 MiB/s (docs/reference/ec2-ebs-limits.md#limits-table): the
    # instance clips the volume's demand, so its low peak is not evidence that it is overprovisioned.
    findings = scenario_findings("block-size")
    assert of_rule(findings, "instance-ebs-bandwidth-bound")
    assert not of_rule(findings, "volume-overprovisioned")
