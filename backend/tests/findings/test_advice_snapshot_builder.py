"""build_snapshot is the inverse of the demo ingest: the store gives back the simulated inventory and values."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from advice_support import DemoCluster, make_org
from headroom.platform.errors import InvalidInput, NotFound
from headroom.timeseries.snapshots import build_snapshot


def _key(series: Any, node_ids: dict[str, str]) -> tuple[str, str, str, tuple[tuple[str, str], ...]]:
    entity_id = node_ids.get(series.entity.id, series.entity.id) if series.entity.kind == "node" else series.entity.id
    return series.entity.kind, entity_id, series.metric, tuple(sorted(series.labels.items()))


def test_store_round_trips_the_simulated_snapshot(db: Any, demo_cluster: DemoCluster) -> None:
    sim = demo_cluster.simulated
    built = build_snapshot(db, demo_cluster.org_id, demo_cluster.cluster.id, start=demo_cluster.start,
                           end=demo_cluster.end)
    # The store keeps no TiUP instance names: a node is known by its store address.
    node_ids = {n.id: n.address for n in sim.nodes}

    assert built.window == sim.window
    assert built.cluster.tikv_version == sim.cluster.tikv_version == "v8.5.1"
    assert built.cluster.deployment == sim.cluster.deployment
    assert built.cluster.region == sim.cluster.region
    assert built.source.kind == "demo"

    expected_instances = sorted((i.model_copy(update={"name": None}) for i in sim.instances), key=lambda i: i.id)
    assert built.instances == expected_instances
    assert built.volumes == sorted(sim.volumes, key=lambda v: v.id)
    expected_nodes = {
        node_ids[n.id]: n.model_copy(update={"id": node_ids[n.id], "host": n.instance_id}) for n in sim.nodes
    }
    assert {n.id: n for n in built.nodes} == expected_nodes
    assert len(built.nodes) == 6

    # Every simulated series with at least one value comes back with the same values, at the same times.
    expected_series = {_key(s, node_ids): s for s in sim.series if any(v is not None for v in s.values)}
    got = {_key(s, {}): s for s in built.series}
    assert set(got) == set(expected_series)
    for key, series in expected_series.items():
        assert got[key].values == series.values, key
        assert got[key].start == series.start and got[key].step_seconds == series.step_seconds  # 60 or 300 (basic EC2)
        assert got[key].statistic == series.statistic and got[key].unit == series.unit


def test_a_sub_window_and_a_coarser_step_aggregate_by_statistic(db: Any, demo_cluster: DemoCluster) -> None:
    sim = demo_cluster.simulated
    start = demo_cluster.start + dt.timedelta(minutes=30)
    built = build_snapshot(db, demo_cluster.org_id, demo_cluster.cluster.id, start=start,
                           end=start + dt.timedelta(minutes=20), step_seconds=300)
    assert built.window.points == 4
    node_ids = {n.id: n.address for n in sim.nodes}
    expected = {_key(s, node_ids): s for s in sim.series}
    volume = sim.volumes[0].id
    ops = next(s for s in built.series if s.entity.id == volume and s.metric == "ebs.read_ops")
    raw = expected[("volume", volume, "ebs.read_ops", ())].values[30:50]
    # ebs.read_ops is a CloudWatch Sum: five 1-minute sums add up to the 5-minute sum.
    assert ops.values == pytest.approx([sum(raw[i * 5:(i + 1) * 5]) for i in range(4)])  # type: ignore[arg-type]
    queue = next(s for s in built.series if s.entity.id == volume and s.metric == "ebs.queue_length")
    raw_q = expected[("volume", volume, "ebs.queue_length", ())].values[30:50]
    assert queue.values == pytest.approx([sum(raw_q[i * 5:(i + 1) * 5]) / 5 for i in range(4)])  # type: ignore[arg-type]


def test_another_org_cannot_build_the_snapshot(db: Any, demo_cluster: DemoCluster) -> None:
    other = make_org(db, "other")
    with pytest.raises(NotFound):
        build_snapshot(db, other, demo_cluster.cluster.id, start=demo_cluster.start, end=demo_cluster.end)


@pytest.mark.parametrize(
    ("delta", "step", "field"),
    [(dt.timedelta(0), 60, "End"), (dt.timedelta(days=8), 60, "End"), (dt.timedelta(hours=1), 90, "Step")],
)
def test_bad_windows_name_the_field(db: Any, demo_cluster: DemoCluster, delta: dt.timedelta, step: int,
                                    field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        build_snapshot(db, demo_cluster.org_id, demo_cluster.cluster.id, start=demo_cluster.start,
                       end=demo_cluster.start + delta, step_seconds=step)
    assert info.value.message.startswith(f"{field}: ")  # the field's label, as a person reads it
