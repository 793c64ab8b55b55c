"""block-size: PingCAP's rule of thumb (docs/reference/pingcap-guidance.md#block-size) (64 KiB -> 4 KiB doubles read IOPS, halves read MiB/s), both directions."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import yaml
from advisor_fixtures import SCENARIOS, plateau, scenario_snapshot, synthetic
from headroom.domain.advisor import Finding, advise
from headroom.domain.advisor.context import Context, p95
from headroom.domain.advisor.rules._tikv_helpers import DataPath, data_path
from headroom.domain.advisor.rules.block_size import point_reads, read_factors
from headroom.domain.snapshot.scenario import scenario_from_dict
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.snapshot.simulate import simulate

RULE = "block-size"


def _variant(name: str, mutate: Callable[[dict[str, Any]], None], hours: float = 24.0) -> Snapshot:
    doc: dict[str, Any] = yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text())
    mutate(doc)
    return simulate(scenario_from_dict(doc), hours=hours, seed=0)


def _findings(snapshot: Snapshot) -> list[Finding]:
    return advise(snapshot, rules=[RULE], cluster_wide=False)  # one store at a time


@pytest.mark.parametrize(
    ("current", "new", "iops_factor", "bytes_factor"),
    [
        (64, 4, 2.0, 0.5),  # PingCAP: "doubles read IOPS and halves read throughput"
        (64, 16, math.sqrt(2), 1 / math.sqrt(2)),  # two of the four halvings
        (32, 64, 2**-0.25, 2**0.25),  # one doubling the other way
        (32, 32, 1.0, 1.0),
    ],
)
def test_read_factors_follow_the_rule_of_thumb(
    current: int, new: int, iops_factor: float, bytes_factor: float
) -> None:
    assert read_factors(current, new) == pytest.approx((iops_factor, bytes_factor))


def _path(read_iops: float, read_kib_each: float) -> DataPath:
    one = np.array([read_iops])
    mibps = one * read_kib_each / 1024.0
    zero = np.zeros(1)
    return DataPath(
        node_id="n",
        volume_ids=("v",),
        instance_id="i",
        read_iops=one,
        write_iops=zero,
        counted_iops=one,
        read_mibps=mibps,
        write_mibps=zero,
        mibps=mibps,
        read_latency_ms=zero,
        write_latency_ms=zero,
        iops_util=zero,
        mibps_util=zero,
        iops_ceiling=np.array([3000.0]),
        mibps_ceiling=np.array([125.0]),
        iops_binding="volume",
        mibps_binding="volume",
    )


@pytest.mark.parametrize(
    ("avg_kib", "block_kib", "point_share"),
    [
        (64.0, 64, 1.0),  # every read is one block: all point reads
        (256.0, 32, 0.0),  # every read is a merged 256 KiB I/O (docs/reference/ebs-io-accounting.md#io-size-cap): scans / compaction
        (144.0, 32, 0.5),  # half and half: (256 - 144) / (256 - 32) = 0.5
    ],
)
def test_point_reads_split_block_reads_from_256_kib_reads(
    avg_kib: float, block_kib: int, point_share: float
) -> None:
    ops, _ = point_reads(_path(1000.0, avg_kib), block_kib)
    assert float(ops[0]) == pytest.approx(1000.0 * point_share)


# --- smaller: bandwidth-bound at the m5.4xlarge EBS limit (PingCAP's own example) ------------------------


def test_block_size_scenario_proposes_16kib_on_both_column_families() -> None:
    found = _findings(scenario_snapshot("block-size"))
    assert sorted(f.entity.id for f in found) == ["tikv-1", "tikv-2", "tikv-3"]
    for f in found:
        assert "64 KiB -> 16 KiB" in f.title  # one unit style per sentence; the change keeps "16KiB"
        assert {c.key for c in f.changes} == {"rocksdb.defaultcf.block-size", "rocksdb.writecf.block-size"}
        for c in f.changes:
            assert (c.current, c.proposed) == ("64KiB", "16KiB")
            assert c.online is False  # docs/reference/tikv-config.md#online-changes: #[online_config(skip)]
            assert "compaction rewrites" in c.reason
        measures = {m.label: m for m in f.evidence.measures}
        mib = measures["MiB/s p95"]
        # m5.4xlarge: 593.75 MB/s = 566.2 MiB/s (docs/reference/ec2-ebs-limits.md#limits-table); the node's share of it binds
        assert "instance m5.4xlarge" in (mib.limit_label or "")
        assert mib.value >= 0.9 * 566.24 * 0.95
        assert measures["MiB/s utilisation p95"].value >= 0.9
        assert measures["IOPS utilisation p95"].value < 0.5  # io2 at 20,000 IOPS has room
        projected = measures["projected IOPS utilisation p95 at 16 KiB"]
        assert projected.value <= 0.75
        assert f.impact.after is not None and f.impact.after <= 0.75  # projected MiB/s utilisation


def test_smaller_blocks_as_proposed_take_the_node_off_its_bandwidth_ceiling() -> None:
    after = _variant(
        "block-size",
        lambda d: d["nodes"][0]["config"]["rocksdb"].update(
            {"defaultcf": {"block-size": "16KiB"}, "writecf": {"block-size": "16KiB"}}
        ),
    )
    ctx = Context(after)
    for node in after.nodes:
        path = data_path(ctx, node)
        assert path is not None and p95(path.mibps_util) < 0.75
    assert _findings(after) == []


# --- larger: IOPS-bound with bandwidth to spare -----------------------------------------------------------


def test_iops_bound_small_blocks_get_larger_ones() -> None:
    """16 KiB point reads at 2,800 of 3,000 IOPS for 3 h: 64 KiB gives 2,800 × 2^(-1/2) = 1,980 (66%)."""
    snap = synthetic(
        volume={"type": "gp3", "size_gib": 2000, "iops": 3000, "throughput_mibps": 1000},
        read_iops=plateau(1000.0, 2800.0, 180),
        read_kib=16.0,
    )
    node = snap.nodes[0].model_copy(update={"config": {"rocksdb": {"defaultcf": {"block-size": "16KiB"}}}})
    snap = snap.model_copy(update={"nodes": [node]})
    (f,) = _findings(snap)
    changes = {c.key: c for c in f.changes}
    assert changes["rocksdb.defaultcf.block-size"].proposed == "64KiB"  # 32 KiB would leave 2,354 (78%)
    assert changes["rocksdb.defaultcf.block-size"].current == "16KiB"
    assert "rocksdb.writecf.block-size" in changes  # its v8.5 default 32KB moves the same way
    assert changes["rocksdb.writecf.block-size"].current == "32KB"  # docs/reference/tikv-config.md#keys-and-defaults: default since v7.0
    assert f.impact.after == pytest.approx(2800 * 2**-0.5 / 3000, rel=1e-3)


# --- silence -------------------------------------------------------------------------------------------


def test_healthy_is_silent() -> None:
    assert _findings(scenario_snapshot("healthy")) == []


def test_near_miss_at_80_percent_of_the_bandwidth_ceiling_is_silent() -> None:
    """8,900 reads/s puts p95 MiB/s at ~80% of the instance limit: 89% of the 90% threshold."""
    snap = scenario_snapshot("near-miss-tikv-read-bandwidth-80pct")
    ctx = Context(snap)
    for node in snap.nodes:
        path = data_path(ctx, node)
        assert path is not None and 0.75 < p95(path.mibps_util) < 0.85
    assert _findings(snap) == []


def test_brief_spike_is_silent() -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["workload"]["spikes"] = [
            {"at_hour": 14, "duration_minutes": 20, "factor": 1.5, "applies_to": "reads"}
        ]

    snap = _variant("near-miss-tikv-read-bandwidth-80pct", mutate)
    path = data_path(Context(snap), snap.nodes[0])
    assert path is not None and float(np.nanmax(path.mibps_util)) >= 0.9
    assert _findings(snap) == []


def test_scan_bound_volume_is_not_a_block_size_problem() -> None:
    """256 KiB reads (scans, compaction) do not change with the block size: no finding."""
    snap = synthetic(
        volume={"type": "gp3", "size_gib": 2000, "iops": 3000, "throughput_mibps": 125},
        read_iops=plateau(100.0, 495.0, 180),
        read_kib=256.0,
    )
    assert _findings(snap) == []


def test_current_value_comes_from_the_version_default_when_unset() -> None:
    """A v6.5 node with no block-size in its config runs the pre-v7.0 default, 64KB (docs/reference/tikv-config.md#keys-and-defaults)."""
    snap = synthetic(
        volume={"type": "gp3", "size_gib": 2000, "iops": 6000, "throughput_mibps": 125},
        read_iops=plateau(500.0, 1950.0, 180),  # 1,950 × 64 KiB = 122 MiB/s: 97.5% of 125 MiB/s
        read_kib=64.0,
    )
    node = snap.nodes[0].model_copy(update={"tikv_version": "v6.5.0", "config": {}})
    snap = snap.model_copy(update={"nodes": [node]})
    (f,) = _findings(snap)
    changes = {c.key: c for c in f.changes}
    for key in ("rocksdb.defaultcf.block-size", "rocksdb.writecf.block-size"):
        assert changes[key].current == "64KB"  # docs/reference/tikv-config.md#keys-and-defaults: 64KB until v7.0.0
        # 32 KiB leaves 122 × 2^(-1/4) = 103 MiB/s (82%); 16 KiB: 86 MiB/s (69%) and 2,758 IOPS (46%)
        assert changes[key].proposed == "16KiB"
        assert changes[key].online is False
