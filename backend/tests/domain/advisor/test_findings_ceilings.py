"""A finding's measure that compares a volume or an instance to one of its ceilings carries that ceiling, the one
the charts and the glance table show (physics.ceilings: value, kind, source), and its `limit` is that ceiling's
value: the advisor's evidence names the ceiling, no surface has to guess it from a number.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from pathlib import Path

import pytest
from headroom.domain.advisor import advise
from headroom.domain.advisor.context import Context
from headroom.domain.advisor.finding import Finding
from headroom.domain.snapshot.scenario import load_scenario
from headroom.domain.snapshot.simulate import simulate

SCENARIOS = Path(__file__).resolve().parents[4] / "examples" / "scenarios"
START = datetime(2026, 1, 5, tzinfo=UTC)
# The rules whose evidence compares a volume or an instance to one of its own ceilings (and the limit labels that
# name such a ceiling: the rules' other limits are thresholds).
CEILING_LIMITS = {
    "volume-iops-ceiling": {"current ceiling", "ceiling", "burst ceiling, while credits last"},
    "volume-throughput-ceiling": {"current ceiling", "ceiling", "burst ceiling, while credits last"},
    "gp2-burst-depletion": {"gp2 baseline (3 IOPS/GiB)"},
    "instance-ebs-bandwidth-bound": {"instance limit", "instance maximum"},
    "instance-ebs-burst-depletion": {"instance baseline"},
    "gp2-to-gp3": {"current sustained IOPS", "current sustained MiB/s"},
    "volume-overprovisioned": {"current sustained IOPS", "current sustained MiB/s"},
}


@cache
def advised(name: str) -> tuple[Context, list[Finding]]:
    scenario = load_scenario(SCENARIOS / f"{name}.yaml")
    snapshot = simulate(scenario, hours=24.0, seed=0, start=scenario.start or START)
    return Context(snapshot), advise(snapshot)


@pytest.mark.parametrize("name", sorted(p.stem for p in SCENARIOS.glob("*.yaml")))
def test_a_measure_against_a_ceiling_carries_that_ceiling(name: str) -> None:
    ctx, findings = advised(name)
    for f in findings:
        for m in f.evidence.measures:
            if m.ceiling is not None:
                assert m.limit == m.ceiling.value and m.unit == m.ceiling.unit, (f.rule, m)
                assert m.ceiling.source and m.ceiling.kind in ("sustained", "burst", "provisioned"), (f.rule, m)
            if m.limit_label not in CEILING_LIMITS.get(f.rule, ()):
                continue
            assert m.ceiling is not None, (f.rule, m.label)
            # the ceiling is one of the entity's own, as the context (and so the charts) makes them
            own = (ctx.volume_ceilings(f.entity.id) if f.entity.kind == "volume"
                   else ctx.instance_ceilings(f.entity.id))
            assert own is not None
            assert m.ceiling in [c for cs in own.values() for c in cs], (f.rule, m.ceiling)


def test_the_kind_says_which_ceiling_held() -> None:
    # the demo-like gp2 scenario: the drain-period demand is judged against the baseline (sustained), never the
    # 3,000 IOPS burst; gp3 volumes at their ceiling are held to what was provisioned
    _, findings = advised("gp2-burst-depletion")
    drains = [m for f in findings if f.rule == "gp2-burst-depletion" for m in f.evidence.measures
              if m.label == "drain-period demand p95"]
    assert drains and all(m.ceiling is not None and (m.ceiling.kind, m.ceiling.id) == ("sustained", "data_baseline_iops")
                          for m in drains)
    _, findings = advised("volume-iops-ceiling")
    p99s = [m for f in findings if f.rule == "volume-iops-ceiling" and "gp3" in f.title for m in f.evidence.measures
            if m.label == "p99 counted IOPS"]
    assert p99s and all(m.ceiling is not None and (m.ceiling.kind, m.ceiling.value) == ("provisioned", 3000.0)
                        for m in p99s)
