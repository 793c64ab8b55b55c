"""The fleet simulator end to end: every example scenario runs, output is deterministic, physics holds."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from headroom.domain.catalog import volume_limits
from headroom.domain.physics.burst import Gp2Bucket
from headroom.domain.snapshot import views
from headroom.domain.snapshot.files import snapshot_from_dict, snapshot_to_json
from headroom.domain.snapshot.scenario import Monitoring, load_scenario, scenario_from_dict
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.snapshot.simulate import hit_ratio, simulate

SCENARIOS = Path(__file__).resolve().parents[4] / "examples" / "scenarios"
START = datetime(2026, 1, 5, tzinfo=UTC)
MIB = 2**20
# The physics is checked on the idealised feed (every series at 1 minute, no missing datapoints); how the data is
# delivered (5-minute EC2 periods, gaps) is test_snapshot_monitoring.py's.
PHYSICS = Monitoring(ec2="minute")


def run(doc: dict[str, Any], hours: float = 24, seed: int = 0) -> Snapshot:
    return simulate(scenario_from_dict(doc), hours=hours, seed=seed, start=START, monitoring=PHYSICS)


def run_file(name: str, hours: float = 48, seed: int = 0) -> Snapshot:
    return simulate(load_scenario(SCENARIOS / name), hours=hours, seed=seed, start=START, monitoring=PHYSICS)


def series(snap: Snapshot, kind: str, entity: str, metric: str) -> np.ndarray:
    found = views.find_series(snap, kind, entity, metric)  # type: ignore[arg-type]
    assert found is not None, f"no {metric} for {kind} {entity}"
    return views.values(found)


def small(**workload: Any) -> dict[str, Any]:
    return {
        "cluster": {"name": "t", "tikv_version": "v8.5.1"},
        "warmup_hours": 0,
        "workload": {"noise": 0, "diurnal": {"amplitude": 0}, **workload},
        "nodes": [{"instance_type": "m6i.2xlarge", "volumes": [{"type": "gp3", "size_gib": 1000}]}],
    }


# ---------------------------------------------------------------------------------------------------------------


def test_examples_cover_every_finding_family() -> None:
    names = {p.stem for p in SCENARIOS.glob("*.yaml")}
    expected = {
        "healthy", "demo", "volume-iops-ceiling", "volume-throughput-ceiling", "instance-ebs-bandwidth-bound",
        "instance-ebs-burst-depletion", "gp2-burst-depletion", "block-cache-read-heavy-at-ceiling",
        "block-cache-memory-rich", "block-size", "thread-pool-saturation", "compaction-rate-limit",
        "raft-dedicated-volume", "compaction-io-titan", "gp2-to-gp3", "volume-overprovisioned",
        "pingcap-aws-m5-2xlarge-io1", "pingcap-aws-m5-4xlarge-io1",
    }  # fmt: skip
    assert expected <= names


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_example_loads_simulates_and_validates(path: Path) -> None:
    text = path.read_text()
    assert text.startswith("# "), "each scenario starts with a header comment saying what it demonstrates"
    snap = simulate(load_scenario(path), hours=6, start=START)
    again = snapshot_from_dict(__import__("json").loads(snapshot_to_json(snap)))
    assert again == snap
    assert snap.window.points == 360
    # 6 h from 00:00: 360 one-minute points, or 72 five-minute periods for the EC2 series of basic monitoring
    assert all(len(s.values) == 360 * 60 // s.step_seconds for s in snap.series)
    assert all(v.instance_id in {i.id for i in snap.instances} for v in snap.volumes)
    for vol in snap.volumes:
        assert views.find_series(snap, "volume", vol.id, "ebs.read_ops") is not None


def test_same_seed_same_snapshot_different_seed_differs() -> None:
    doc = small(reads_per_sec=3000, noise=0.1)
    a, b, c = run(doc, 6, seed=7), run(doc, 6, seed=7), run(doc, 6, seed=8)
    assert snapshot_to_json(a) == snapshot_to_json(b)
    assert snapshot_to_json(a) != snapshot_to_json(c)
    assert a.volumes == c.volumes  # ids come from names, not from the seed


def test_served_iops_never_exceed_the_volume_ceiling_in_any_example() -> None:
    for name in ("volume-iops-ceiling.yaml", "gp2-burst-depletion.yaml", "demo.yaml"):
        snap = run_file(name, hours=24)
        for vol in snap.volumes:
            io = views.volume_io(snap, vol.id)
            exceeded = series(snap, "volume", vol.id, "ebs.iops_exceeded_check")
            limits = volume_limits(vol.type, vol.size_gib, vol.iops, vol.throughput_mibps)
            assert np.nanmax(io.counted_iops) <= limits.max_iops * 1.001 + 1
            assert np.nanmax(io.mibps) <= limits.max_throughput_mibps * 1.001
            # a step whose IOPS demand was clipped sits at a ceiling: the IOPS one (burst or baseline), or the
            # MiB/s one when that binds harder
            clipped = exceeded == 1
            at_iops = io.counted_iops[clipped] >= limits.baseline_iops * 0.99
            at_mibps = io.mibps[clipped] >= limits.baseline_throughput_mibps * 0.99
            assert np.all(at_iops | at_mibps)


def test_gp2_burst_balance_follows_the_bucket_formula() -> None:
    # Every I/O in this scenario is <= 256 KiB, so counted IOPS = ops (docs/reference/ebs-io-accounting.md#io-size-cap). Replaying the served IOPS
    # through headroom.domain.physics.burst.Gp2Bucket must reproduce the BurstBalance series.
    snap = run_file("gp2-burst-depletion.yaml", hours=48)
    vol = snap.volumes[0]
    io = views.volume_io(snap, vol.id)
    balance = series(snap, "volume", vol.id, "ebs.burst_balance")
    assert balance.min() == 0 and balance.max() > 50  # drains in the peak, refills at night
    bucket = Gp2Bucket.for_size(vol.size_gib)
    credits = bucket.credits_from_percent(balance[0])
    replay = [balance[0]]
    for served in io.counted_iops[1:]:
        credits, _ = bucket.step(credits, float(served), 60)
        replay.append(bucket.percent(credits))
    assert np.max(np.abs(np.array(replay) - balance)) < 0.5
    # while the bucket stays empty the volume serves its baseline, 3 × 500 GiB (+ whole-op rounding)
    still_empty = (balance[1:] <= 0) & (balance[:-1] <= 0)
    assert still_empty.sum() > 60
    # (a few IOPS above it when the credits earned in a quieter minute, < 0.005% of the bucket, are spent)
    assert np.all(io.counted_iops[1:][still_empty] <= 1500 * 1.005)


def test_block_cache_hit_ratio_follows_cache_size_over_working_set() -> None:
    ratios = []
    for capacity in ("2GiB", "8GiB", "14GiB"):
        doc = small(reads_per_sec=1000, working_set_gib=40)
        doc["nodes"][0]["config"] = {"storage.block-cache.capacity": capacity}
        snap = run(doc, 2)
        ratios.append(float(np.nanmean(views.block_cache_hit_ratio(snap, snap.nodes[0].id))))
    assert ratios == sorted(ratios)
    # documented curve: h(x) = 0.99 (1 − e^(−3x)) / (1 − e^(−3)), x = cache / working set
    assert ratios[1] == pytest.approx(float(hit_ratio(8 / 40, 3.0)), abs=2e-3)


def test_thread_cpu_is_capped_at_pool_size() -> None:
    doc = small(write_mibps=40.0, value_size_bytes=100, key_size_bytes=28)  # ~330k writes/s
    doc["nodes"][0]["volumes"][0] = {"type": "gp3", "size_gib": 4000, "iops": 16000, "throughput_mibps": 1000}
    doc["nodes"][0]["config"] = {"rocksdb.rate-bytes-per-sec": "10GiB"}
    snap = run(doc, 1)
    node = snap.nodes[0]
    pool = node.config_value("storage.scheduler-worker-pool-size")
    assert pool == 4  # clamp(8 vCPUs, 1, 4), docs/reference/tikv-config.md#keys-and-defaults
    cpu = series(snap, "node", node.id, "tikv.thread_cpu.scheduler")
    assert cpu.max() == pytest.approx(4.0)
    assert series(snap, "node", node.id, "tikv.wait.scheduler_latch").min() > 0.05  # saturated pool queues
    light = run(small(write_mibps=1.0), 1)
    assert series(light, "node", light.nodes[0].id, "tikv.thread_cpu.scheduler").max() < 1.0


def test_thread_pool_example_runs_hot_at_peak() -> None:
    snap = run_file("thread-pool-saturation.yaml", hours=24)
    cpu = series(snap, "node", snap.nodes[0].id, "tikv.thread_cpu.scheduler")
    assert cpu.max() > 3.6  # the dashboard's 90%-of-4-threads line (docs/reference/tikv-metrics.md#dashboard-thresholds)
    assert cpu.max() <= 4.0


def test_compaction_flow_follows_write_bytes_and_titan_cuts_it() -> None:
    doc = small(write_mibps=4.0, write_amplification=8, value_size_bytes=4096)
    doc["nodes"][0]["config"] = {"rocksdb.titan.enabled": False}
    plain = run(doc, 2)
    flow = series(plain, "node", plain.nodes[0].id, "tikv.compaction_write_bytes")
    assert np.mean(flow) == pytest.approx(4.0 * MIB * 7, rel=0.02)  # (WA − 1) × user bytes
    doc["nodes"][0]["config"] = {
        "rocksdb.titan.enabled": True,
        "rocksdb.defaultcf.titan.min-blob-size": "1KiB",
    }
    titan = run(doc, 2)
    assert (
        np.mean(series(titan, "node", titan.nodes[0].id, "tikv.compaction_write_bytes")) < np.mean(flow) / 3
    )


def test_rate_limit_below_demand_grows_pending_bytes_and_stalls() -> None:
    snap = run_file("compaction-rate-limit.yaml", hours=72)
    node = snap.nodes[0].id
    pending = series(snap, "node", node, "tikv.pending_compaction_bytes")
    limit = 100 * MIB
    flow = series(snap, "node", node, "tikv.compaction_write_bytes") + series(
        snap, "node", node, "tikv.flush_write_bytes"
    )
    assert flow.max() <= limit * 1.001
    assert pending.max() > 192 * 2**30  # past the soft limit
    assert series(snap, "node", node, "tikv.write_stall").max() > 0


def test_instance_burst_drains_and_refills() -> None:
    snap = run_file("instance-ebs-burst-depletion.yaml", hours=48)
    inst = snap.instances[0].id
    balance = series(snap, "instance", inst, "ec2.ebs_byte_balance")
    assert balance.min() == 0
    first_empty = int(np.flatnonzero(balance == 0)[0])
    assert balance[first_empty:].max() > 90  # refilled overnight
    io = views.instance_io(snap, inst)
    still_empty = (balance[1:] == 0) & (balance[:-1] == 0)
    # m6i.xlarge baseline 1,250 Mbps = 156.25 MB/s (docs/reference/ec2-ebs-limits.md#limits-table) while the bucket stays empty
    assert np.nanmax(io.mibps[1:][still_empty]) <= 156.25e6 / MIB * 1.001


def test_pingcap_setups_m5_4xlarge_serves_more_than_m5_2xlarge() -> None:
    small_node = simulate(load_scenario(SCENARIOS / "pingcap-aws-m5-2xlarge-io1.yaml"), hours=24, monitoring=PHYSICS)
    big_node = simulate(load_scenario(SCENARIOS / "pingcap-aws-m5-4xlarge-io1.yaml"), hours=24, monitoring=PHYSICS)
    a = views.instance_io(small_node, small_node.instances[0].id).mibps
    b = views.instance_io(big_node, big_node.instances[0].id).mibps
    assert np.nanmedian(a[60:]) == pytest.approx(287.5e6 / MIB, rel=0.001)  # held at the 2xlarge baseline
    assert np.nanmax(a[:20]) > 400  # while the 30-minute burst lasts
    assert np.nanmean(b) > 1.3 * np.nanmean(a[60:])


def test_shared_volume_raft_log_is_slower_than_a_dedicated_one() -> None:
    shared = run_file("raft-dedicated-volume.yaml", hours=24)
    dedicated = run_file("healthy.yaml", hours=24)
    p99_shared = np.mean(series(shared, "node", shared.nodes[0].id, "tikv.raft_log_fsync"))
    p99_dedicated = np.mean(series(dedicated, "node", dedicated.nodes[0].id, "tikv.raft_log_fsync"))
    assert p99_shared > 1.5 * p99_dedicated
    assert dedicated.nodes[0].raft_volume_ids and not shared.nodes[0].raft_volume_ids
    assert dedicated.nodes[0].config_value("raft-engine.dir") == "/raft/tikv"


def test_hosts_shared_by_two_tikv_and_raid0_stripes() -> None:
    doc = small(reads_per_sec=2000)
    doc["nodes"][0].update(
        count=2,
        tikv_per_host=2,
        volumes=[{"type": "gp3", "size_gib": 500, "raid0": {"stripes": 2}}],
    )
    snap = run(doc, 1)
    assert len(snap.instances) == 1 and len(snap.nodes) == 2
    assert {n.host for n in snap.nodes} == {snap.nodes[0].host}
    assert [n.address.split(":")[1] for n in snap.nodes] == ["20160", "20161"]
    stripes = [v for v in snap.volumes if v.id in snap.nodes[0].data_volume_ids]
    assert len(stripes) == 2 and len({v.raid_group for v in stripes}) == 1
    a, b = (views.volume_io(snap, v.id).iops for v in stripes)
    assert np.allclose(a, b, rtol=0.01)
    inst = views.instance_io(snap, snap.instances[0].id).iops
    total = sum(views.volume_io(snap, v.id).iops for v in snap.volumes)
    assert np.allclose(inst, total, rtol=1e-3)


def test_168_hours_of_the_demo_fleet_is_fast() -> None:
    scenario = load_scenario(SCENARIOS / "demo.yaml")
    # CPU time, not wall time: the test machine is shared (about 2 s of CPU on one core when written)
    started = time.process_time()
    snap = simulate(scenario, hours=168, start=START, monitoring=PHYSICS)
    elapsed = time.process_time() - started
    assert len(snap.nodes) == 6 and snap.window.points == 168 * 60
    assert elapsed < 8, f"168 h × 6 nodes took {elapsed:.1f} s of CPU"


def test_packaged_demo_matches_the_example_and_ends_at_the_given_time() -> None:
    from headroom.domain.snapshot.simulate import DEMO_SCENARIO, demo_snapshot

    assert DEMO_SCENARIO.read_text() == (SCENARIOS / "demo.yaml").read_text()
    end = datetime(2026, 3, 1, 12, 30, 15, tzinfo=UTC)
    snap = demo_snapshot(end, hours=2)
    assert snap.window.end == datetime(2026, 3, 1, 12, 30, tzinfo=UTC)
    assert snap.cluster.name == "demo-prod" and len(snap.nodes) == 6


def test_start_time_zone_does_not_shift_the_diurnal_peak() -> None:
    from datetime import timedelta, timezone

    doc = small(reads_per_sec=3000)
    doc["workload"]["diurnal"] = {"amplitude": 0.5, "peak_hour_utc": 14}
    utc = simulate(scenario_from_dict(doc), hours=2, start=START, monitoring=PHYSICS)
    shifted = simulate(
        scenario_from_dict(doc), hours=2, start=START.astimezone(timezone(timedelta(hours=8))), monitoring=PHYSICS
    )
    name = utc.nodes[0].id
    assert np.array_equal(
        series(utc, "node", name, "tikv.block_cache_hit"),
        series(shifted, "node", name, "tikv.block_cache_hit"),
    )


def test_other_volumes_are_listed_and_idle() -> None:
    doc = small(reads_per_sec=1000)
    doc["nodes"][0]["volumes"].append({"role": "other", "type": "gp3", "size_gib": 50})
    snap = run(doc, 1)
    other = next(v for v in snap.volumes if v.role == "other")
    assert other.id not in snap.nodes[0].data_volume_ids + snap.nodes[0].raft_volume_ids
    assert series(snap, "volume", other.id, "ebs.read_ops").max() == 0
