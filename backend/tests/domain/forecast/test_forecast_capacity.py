"""Growth to a snapshot's ceilings, on a simulated snapshot whose growth is known: bench/scenarios/
growth-gp3-iops.yaml stores 400 GiB growing 10 %/week compounded ((1 + g)^(t / 168 h), headroom.domain.snapshot.simulate)
on a gp3 volume of 1,000 GiB / 6,000 IOPS / 500 MiB/s."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import pytest
from headroom.domain.catalog import instance_limits
from headroom.domain.forecast.capacity import (
    cluster_ceilings,
    cluster_growth,
    days_on_band,
    instance_growth,
    node_capacity_growth,
    volume_growth,
)
from headroom.domain.snapshot.scenario import load_scenario
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.snapshot.simulate import FS_OVERHEAD, RAFT_LOG_ON_DATA_GIB, simulate

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
    # against the capacity TiKV reports (the filesystem: 1,000 GiB less the simulator's 1.5 % of metadata), as
    # PD judges the store; the space used as PD sees it is capacity - available (TiKV's store heartbeat)
    capacity = 1000.0 * (1 - FS_OVERHEAD)
    assert c.ceiling == pytest.approx(0.5 * capacity)
    assert "capacity TiKV reports" in c.ceiling_source
    # 400 × 1.1^(t/168) (+ the raft log on the data disk) = 492.5 at t = 168 ln(492.5 / 400) / ln 1.1 - the log
    extra = 0.0 if any(v.role == "raft" for v in snapshot.volumes) else RAFT_LOG_ON_DATA_GIB
    truth = (168 * math.log((0.5 * capacity - extra) / 400) / math.log(1.1) - HOURS) / 24
    assert c.forecast.days_until_ceiling == pytest.approx(truth, abs=2 / 24)
    assert c.forecast.growth_percent_per_week == pytest.approx(10.0, rel=0.03)
    with pytest.raises(ValueError):
        node_capacity_growth(snapshot, node.id, ceiling_share=0)


def test_cluster_growth_projects_every_ceiling_of_volumes_instances_and_nodes(snapshot: Snapshot) -> None:
    out = cluster_growth(snapshot, horizon_days=30)
    by_key = {(c.entity_kind, c.entity_id, c.metric): c for c in out}
    inst = snapshot.instances[0]
    # m6i.4xlarge: baseline EBS 5,000 Mbps = 625 MB/s (596.0 MiB/s) and 20,000 IOPS, bursting to 10 Gbps /
    # 40,000 IOPS (AWS, Amazon EBS-optimized instance types; the catalog): projected against the baseline
    limits = instance_limits(inst.type)
    assert by_key[("instance", inst.id, "mibps")].ceiling == limits.baseline_throughput_mibps
    assert by_key[("instance", inst.id, "iops")].ceiling == limits.baseline_iops == 20_000
    assert "m6i.4xlarge" in by_key[("instance", inst.id, "iops")].ceiling_source
    # the instance carries both volumes' I/O: at least the data volume's demand
    data = next(v for v in snapshot.volumes if v.role == "data")
    assert (by_key[("instance", inst.id, "iops")].forecast.level_now
            >= 0.99 * by_key[("volume", data.id, "iops")].forecast.level_now)
    # each volume's two ceilings (the raft volume's too), and the node's disk at PD's low-space ratio:
    # 0.8 x 1,000 GiB = 800 GiB (PD configuration file, schedule.low-space-ratio)
    assert {k[2] for k in by_key if k[0] == "volume"} == {"iops", "mibps"}
    assert len([k for k in by_key if k[0] == "volume"]) == 2 * len(snapshot.volumes)
    node = snapshot.nodes[0]
    used = by_key[("node", node.id, "used_gib")]
    assert used.ceiling == pytest.approx(0.8 * 1000.0 * (1 - FS_OVERHEAD)) and "low-space-ratio" in used.ceiling_source
    # 400 x 1.1^(t/168) = 788 at t = 168 ln 1.97 / ln 1.1 = 1,195 h; the history ends at 96 h: 45.8 days -> beyond
    # a 30-day horizon
    assert used.forecast.days_until_ceiling is None


def test_instance_growth_on_five_minute_ec2_metrics() -> None:
    # AWS/EC2 on basic monitoring: 5-minute sums (docs/reference/cloudwatch.md), as the simulator's default delivers them
    snap = simulate(load_scenario(SCENARIO), hours=HOURS, seed=0)
    inst = snap.instances[0]
    series = next(s for s in snap.series if s.entity.kind == "instance" and s.metric == "ec2.ebs_read_ops")
    assert series.step_seconds == 300
    out = {c.metric: c for c in instance_growth(snap, inst.id, horizon_days=30)}
    assert set(out) == {"iops", "mibps"}
    assert out["iops"].forecast.history_hours >= HOURS - 1
    assert out["iops"].forecast.growth_percent_per_week is not None
    assert out["iops"].forecast.growth_percent_per_week > 5.0  # the load grows 10 %/week


def test_cluster_ceilings_are_the_ceilings_the_fits_use(snapshot: Snapshot) -> None:
    # the same Ceiling objects (value, kind, source), not only the same numbers
    fitted = {(c.entity_kind, c.entity_id, c.metric): c.target for c in cluster_growth(snapshot, horizon_days=30)}
    ceilings = cluster_ceilings(snapshot)
    assert fitted and {k: ceilings[k] for k in fitted} == fitted
    data = next(v for v in snapshot.volumes if v.role == "data")
    iops = ceilings[("volume", data.id, "iops")]
    assert (iops.value, iops.kind, iops.id) == (6000, "provisioned", "data_max_iops")  # provisioned gp3 IOPS (scenario)
    disks = [c for k, c in ceilings.items() if k[2] == "used_gib"]
    assert disks and all(c.kind == "configured" and "low-space-ratio" in c.source for c in disks)


def test_days_on_band_reads_the_first_sample_of_each_path_at_the_ceiling() -> None:
    start = dt.datetime(2026, 11, 2, tzinfo=dt.UTC)
    t = [start + dt.timedelta(hours=6 * k) for k in range(8)]  # days 0, 0.25, ... 1.75
    point = [10, 20, 30, 40, 50, 60, 70, 80]
    low = [p - 10 for p in point]
    high = [p + 10 for p in point]
    got = days_on_band(start, t, point, low, high, ceiling=40)
    assert (got.days, got.days_low, got.days_high) == (0.75, 0.5, 1.0)
    # a ceiling the point path never reaches in the band: the upper edge gives the earliest, the latest is unknown
    beyond = days_on_band(start, t, point, low, high, ceiling=85)
    assert (beyond.days, beyond.days_low, beyond.days_high) == (None, 1.75, None)
    # already at the ceiling at the start of the band
    assert days_on_band(start, t, point, low, high, ceiling=5).days == 0.0
