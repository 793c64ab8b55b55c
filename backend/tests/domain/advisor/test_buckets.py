"""One burst forecast: the finding's (the burst rules') is advisor.buckets' on the same Context, the function the
Metrics panels and the glance table call, for gp2 volumes and instance EBS buckets while they drain."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from headroom.domain.advisor import advise
from headroom.domain.advisor.buckets import instance_burst_forecast, volume_burst_forecast
from headroom.domain.advisor.context import Context
from headroom.domain.snapshot.scenario import load_scenario
from headroom.domain.snapshot.simulate import simulate

SCENARIOS = Path(__file__).resolve().parents[4] / "examples" / "scenarios"


# gp2-burst-depletion's BurstBalance drains from ~90 % at 11:00 to 0 by 15:00 and the demo's gp2 volumes' from
# ~70 % at 08:00 to 0 by 12:00, so days ending at 13:00 / 10:30 end with a bucket on its way out (draining); the
# instances' EBSByteBalance% empties by 15:00 and refills after, when the rule reports it (not draining: "never").
@pytest.mark.parametrize(("name", "end", "draining"), [
    ("gp2-burst-depletion", datetime(2026, 11, 2, 13, 0, tzinfo=UTC), True),
    ("demo", datetime(2026, 11, 2, 10, 30, tzinfo=UTC), True),
    ("instance-ebs-burst-depletion", datetime(2026, 11, 2, 16, 0, tzinfo=UTC), False),
])
def test_the_findings_forecast_is_the_buckets_forecast(name: str, end: datetime, draining: bool) -> None:
    snapshot = simulate(load_scenario(SCENARIOS / f"{name}.yaml"), hours=24, start=end - timedelta(hours=24))
    ctx = Context(snapshot)
    compared = drained = 0
    for finding in advise(snapshot, now=end):
        for fc in finding.evidence.forecasts:
            if fc.kind != "burst_empty":
                continue
            kind, entity = finding.entity.kind, finding.entity.id
            if kind == "volume":
                ours = volume_burst_forecast(ctx, entity)
            else:
                ours = instance_burst_forecast(ctx, entity, "io" if fc.label == "ec2.ebs_io_balance" else "byte")
            assert ours is not None, (finding.rule, entity)
            assert fc.within_seconds == ours.seconds_to_empty and fc.balance_pct == ours.balance_percent
            assert fc.earliest == ours.empties_at_earliest and fc.latest == ours.empties_at_latest
            compared += 1
            drained += bool(fc.within_seconds)  # a bucket still draining, not only an empty one
    assert compared and (drained or not draining), (compared, drained)
