"""raft-dedicated-volume: slow, fsync-heavy Raft log on the data volume -> a small gp3 (docs/reference/pingcap-guidance.md#raft-engine-disk) or io2."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import yaml
from advisor_fixtures import SCENARIOS, scenario_snapshot
from headroom.domain.advisor import Finding, advise
from headroom.domain.advisor.context import Context, p95
from headroom.domain.advisor.rules.raft import raft_write_rate
from headroom.domain.snapshot.scenario import scenario_from_dict
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.snapshot.simulate import simulate

RULE = "raft-dedicated-volume"


def _variant(name: str, mutate: Callable[[dict[str, Any]], None], hours: float = 24.0) -> Snapshot:
    doc: dict[str, Any] = yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text())
    mutate(doc)
    return simulate(scenario_from_dict(doc), hours=hours, seed=0)


def _findings(snapshot: Snapshot) -> list[Finding]:
    return advise(snapshot, rules=[RULE], cluster_wide=False)  # one store at a time


def test_shared_raft_log_gets_a_dedicated_20_gib_gp3() -> None:
    snap = scenario_snapshot("raft-dedicated-volume")
    found = _findings(snap)
    assert sorted(f.entity.id for f in found) == ["tikv-1", "tikv-2", "tikv-3"]
    for f in found:
        node = next(n for n in snap.nodes if n.id == f.entity.id)
        aws, tikv = f.changes
        assert aws.target == "aws" and aws.key == "volume.create"
        assert isinstance(aws.proposed, dict)
        # docs/reference/pingcap-guidance.md#raft-engine-disk: a 20 GB gp3 (3,000 IOPS / 125 MB/s free) is usually enough for Raft Engine
        assert {k: aws.proposed[k] for k in ("type", "size_gib", "iops", "throughput_mibps")} == {
            "type": "gp3",
            "size_gib": 20.0,
            "iops": 3000,
            "throughput_mibps": 125.0,
        }
        assert aws.proposed["attach_to"] == node.instance_id
        assert aws.entity is not None and aws.entity.instance_id == node.instance_id
        assert tikv.key == "raft-engine.dir"  # Raft Engine is on by default since v6.1.0 (docs/reference/tikv-config.md#keys-and-defaults)
        # The mount and both directories come from the node's config: storage.data-dir /data/tikv, raft-engine.dir
        # empty = {data-dir}/raft-engine (docs/reference/tikv-config.md#keys-and-defaults)
        assert (tikv.current, tikv.proposed, tikv.online) == ("", "/data/tikv-raft/raft-engine", False)
        assert {k: aws.proposed[k] for k in ("node", "mount", "raft_key", "raft_dir", "raft_dir_now")} == {
            "node": node.id, "mount": "/data/tikv-raft", "raft_key": "raft-engine.dir",
            "raft_dir": "/data/tikv-raft/raft-engine", "raft_dir_now": "/data/tikv/raft-engine"}
        # docs/reference/ebs-prices.md#prices-us-east-1: gp3 $0.08/GB-month, 3,000 IOPS and 125 MiB/s included -> 20 × 0.08
        assert f.impact.monthly_cost_delta_usd == pytest.approx(1.60)
        gp3, io2 = f.options
        assert gp3.changes == f.changes
        # PingCAP's AWS article's "40 GB io1/io2 at 2,000 IOPS ... $135" (pingcap-guidance.md#raft-engine-disk): 40 × $0.125 + 2,000 × $0.065 (docs/reference/ebs-prices.md#prices-us-east-1)
        assert io2.impact.monthly_cost_delta_usd == pytest.approx(135.0)
        assert io2.changes[0].proposed["type"] == "io2"  # type: ignore[index]
        measures = {m.label: m for m in f.evidence.measures}
        fsync = measures["raft-log fsync p99 (window p50)"]
        assert fsync.limit == 5.0 and fsync.value >= 5.0
        heavy = measures["raft-log writes on the data volume while slow (estimate)"]
        assert heavy.limit == 200.0 and heavy.value > 300  # the scenario's 400 fsync/s
        assert f.evidence.longest_run_minutes is not None and f.evidence.longest_run_minutes >= 30


def test_raftdb_path_when_raft_engine_is_off() -> None:
    snap = _variant(
        "raft-dedicated-volume",
        lambda d: d["nodes"][0].setdefault("config", {}).update({"raft-engine.enable": False}),
    )
    for f in _findings(snap):
        tikv = f.changes[1]
        assert tikv.key == "raftstore.raftdb-path"  # docs/reference/tikv-config.md#keys-and-defaults: used only when Raft Engine is off
        assert (tikv.proposed, tikv.online) == ("/data/tikv-raft/raftdb", False)
        # raftdb-path empty = {data-dir}/raft (docs/reference/tikv-config.md#keys-and-defaults)
        assert isinstance(f.changes[0].proposed, dict) and f.changes[0].proposed["raft_dir_now"] == "/data/tikv/raft"


def test_without_a_data_dir_the_mount_is_left_for_the_user() -> None:
    def drop(doc: dict[str, Any]) -> None:
        for node in doc["nodes"]:
            node.setdefault("config", {})["storage.data-dir"] = None
    found = _findings(_variant("raft-dedicated-volume", drop))
    assert found
    for f in found:
        spec = f.changes[0].proposed
        assert isinstance(spec, dict) and spec["mount"] is None and spec["raft_dir_now"] is None
        assert f.changes[1].proposed == "/raft/tikv/raft-engine"  # the fallback the AWS script asks to confirm


def test_the_dedicated_volume_clears_the_finding_and_speeds_up_fsync() -> None:
    before = scenario_snapshot("raft-dedicated-volume")
    after = _variant(
        "raft-dedicated-volume",
        lambda d: d["nodes"][0]["volumes"].append({"role": "raft", "type": "gp3", "size_gib": 20}),
    )
    assert _findings(after) == []
    ctx_b, ctx_a = Context(before), Context(after)
    fs_b = ctx_b.series("node", "tikv-1", "tikv.raft_log_fsync")
    fs_a = ctx_a.series("node", "tikv-1", "tikv.raft_log_fsync")
    assert fs_b is not None and fs_a is not None
    assert p95(fs_a) < 0.005 < p95(fs_b)


def test_raft_write_rate_estimates_the_fsyncs() -> None:
    """Volume write ops minus flush/compaction's 256 KiB writes ~ the scenario's 400 raft-log writes/s."""
    snap = scenario_snapshot("raft-dedicated-volume")
    ctx = Context(snap)
    rate = raft_write_rate(ctx, snap.nodes[0])
    assert rate is not None
    assert 330 < float(np.nanmedian(rate)) < 460


def test_healthy_is_silent() -> None:
    assert _findings(scenario_snapshot("healthy")) == []


def test_moderate_node_with_a_shared_log_is_silent() -> None:
    """healthy.yaml without its raft volume: the log shares the data volume, but fsyncs stay fast."""
    snap = _variant("healthy", lambda d: d["nodes"][0].update({"volumes": d["nodes"][0]["volumes"][:1]}))
    assert all(not n.raft_volume_ids for n in snap.nodes)
    assert _findings(snap) == []


def test_near_miss_below_fsync_heavy_is_silent() -> None:
    """175 fsync/s: slow fsyncs, but ~172 raft-log writes/s is 86% of the 200/s fsync-heavy threshold."""
    snap = scenario_snapshot("near-miss-tikv-raft-fsync-175")
    ctx = Context(snap)
    rate = raft_write_rate(ctx, snap.nodes[0])
    assert rate is not None and 160 < float(np.nanmedian(rate)) < 200
    assert _findings(snap) == []
