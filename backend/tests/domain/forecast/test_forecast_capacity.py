"""Growth to a snapshot's ceilings, on a simulated snapshot whose growth is known: bench/scenarios/
growth-gp3-iops.yaml stores 400 GiB growing 10 %/week compounded ((1 + g)^(t / 168 h), headroom.domain.snapshot.simulate)
on a gp3 volume of 1,000 GiB / 6,000 IOPS / 500 MiB/s."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from headroom.domain.forecast.capacity import node_capacity_growth, volume_growth
from headroom.domain.snapshot.scenario import load_scenario
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.snapshot.simulate import simulate

SCENARIO = Path(__file__).resolve().parents[4] / "bench" / "scenarios" / "growth-gp3-iops.yaml"
HOURS = 96


@pytest.fixture(scope="module")
def snapshot() -> Snapshot:
    return simulate(load_scenario(SCENARIO), hours=HOURS, seed=0, step_seconds=300)


def test_volume_ceilings_from_the_catalog(snapshot: Snapshot) -> None:
    data = next(v for v in snapshot.volumes if v.role == "data")
    out = {c.metric: c for c in volume_growth(snapshot, data.id, horizon_days=30)}
    assert out["iops"].ceiling == 6000  # provisioned gp3 IOPS (scenario)
    assert out["mibps"].ceiling == 500  # provisioned gp3 throughput (scenario)
    assert out["iops"].forecast.method == "ets-daily"  # 96 h >= 3 daily cycles
    assert out["iops"].forecast.start == snapshot.window.end
    # demand grows at least as fast as the load (10 %/week) and far below 6,000 IOPS now
    assert out["iops"].forecast.growth_percent_per_week is not None
    assert out["iops"].forecast.growth_percent_per_week > 5.0


def test_node_capacity_days_until_half_full(snapshot: Snapshot) -> None:
    node = snapshot.nodes[0]
    c = node_capacity_growth(snapshot, node.id, ceiling_share=0.5, horizon_days=30)
    assert c is not None
    assert c.ceiling == 500.0
    # 400 × 1.1^(t/168) = 500 at t = 168 ln 1.25 / ln 1.1 = 393.3 h; the history ends at 96 h: 12.4 days
    truth = (168 * math.log(1.25) / math.log(1.1) - HOURS) / 24
    assert c.forecast.days_until_ceiling == pytest.approx(truth, abs=2 / 24)
    assert c.forecast.growth_percent_per_week == pytest.approx(10.0, rel=0.03)
    with pytest.raises(ValueError):
        node_capacity_growth(snapshot, node.id, ceiling_share=0)
