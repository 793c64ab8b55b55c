"""compaction-rate-limit (template: 50-80% of the disk) and compaction-io-titan (docs/reference/pingcap-guidance.md#titan-and-compression: Titan / zstd)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml
from advisor_fixtures import SCENARIOS, scenario_snapshot
from headroom.domain.advisor import Finding, Option, advise
from headroom.domain.advisor.context import Context, p95
from headroom.domain.advisor.rules._tikv_helpers import data_path
from headroom.domain.advisor.rules.compaction import limit_target
from headroom.domain.advisor.rules.titan import ALL_ZSTD, rank_options
from headroom.domain.snapshot.scenario import scenario_from_dict
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.snapshot.simulate import simulate

RATE = "compaction-rate-limit"
TITAN = "compaction-io-titan"
GIB = 1024**3


def _variant(name: str, mutate: Callable[[dict[str, Any]], None], hours: float = 24.0) -> Snapshot:
    doc: dict[str, Any] = yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text())
    mutate(doc)
    return simulate(scenario_from_dict(doc), hours=hours, seed=0)


def _findings(snapshot: Snapshot, rule: str) -> list[Finding]:
    return advise(snapshot, rules=[rule], cluster_wide=False)  # one store at a time


def _set(config: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def mutate(d: dict[str, Any]) -> None:
        d["nodes"][0].setdefault("config", {}).update(config)

    return mutate


# --- compaction-rate-limit ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("disk", "need", "expected"),
    [
        (250.0, 95.7, 125.0),  # 1.25 × need = 119.6 < 50% of the disk: the band's floor (template 50%)
        (500.0, 300.0, 375.0),  # 1.25 × need, inside 50-80%
        (500.0, 350.0, 400.0),  # 437.5 capped at 80% of the disk (template)
        (100.0, 90.0, None),  # compaction needs more than 80% of the disk: a limit would stall writes
    ],
)
def test_limit_target_stays_in_the_templates_band(disk: float, need: float, expected: float | None) -> None:
    assert limit_target(disk, need) == (pytest.approx(expected) if expected is not None else None)


def test_starving_limit_is_raised_to_80_percent_of_the_disk() -> None:
    found = _findings(scenario_snapshot("compaction-rate-limit"), RATE)
    assert sorted(f.entity.id for f in found) == ["tikv-1", "tikv-2", "tikv-3"]
    for f in found:
        assert f.dedup_key.endswith("/raise")
        assert f.severity == "critical"  # writes stalled (tikv.write_stall > 0)
        (change,) = f.changes  # rate-limiter-auto-tuned is already true (docs/reference/tikv-config.md#keys-and-defaults default)
        assert change.key == "rocksdb.rate-bytes-per-sec"
        assert (change.current, change.proposed) == ("100MiB", "400MiB")  # 80% of the gp3's 500 MiB/s
        assert change.online is True  # docs/reference/tikv-config.md#online-changes: online in code
        measures = {m.label: m for m in f.evidence.measures}
        flow = measures["flush + compaction writes p95"]
        assert flow.limit == 100.0 and flow.value >= 0.9 * flow.limit
        pending = measures["pending compaction bytes p95"]
        assert pending.limit == 192.0 and pending.value > pending.limit  # template flow-control soft limit
        assert measures["disk MiB/s utilisation p95"].value < 0.9
        assert measures["disk throughput ceiling"].value == 500.0


def test_raising_as_proposed_drains_the_backlog() -> None:
    snap = _variant("compaction-rate-limit", _set({"rocksdb.rate-bytes-per-sec": "400MiB"}))
    ctx = Context(snap)
    for node in snap.nodes:
        pending = ctx.series("node", node.id, "tikv.pending_compaction_bytes")
        assert pending is not None and p95(pending) < 192 * GIB
    assert _findings(snap, RATE) == []


def test_auto_tuning_is_switched_on_with_the_limit() -> None:
    snap = _variant("compaction-rate-limit", _set({"rocksdb.rate-limiter-auto-tuned": False}))
    f = _findings(snap, RATE)[0]
    changes = {c.key: c for c in f.changes}
    auto = changes["rocksdb.rate-limiter-auto-tuned"]
    assert (auto.current, auto.proposed, auto.online) == (False, True, True)


def test_limiter_that_binds_without_a_backlog_is_silent() -> None:
    """At 125 MiB/s the limiter still binds at peak but pending bytes stay far under the 192 GiB soft limit."""
    snap = _variant("compaction-rate-limit", _set({"rocksdb.rate-bytes-per-sec": "125MiB"}))
    pending = Context(snap).series("node", "tikv-1", "tikv.pending_compaction_bytes")
    assert pending is not None and 0 < p95(pending) < 192 * GIB
    assert _findings(snap, RATE) == []


def test_compaction_competing_at_the_throughput_ceiling_gets_a_limit() -> None:
    found = _findings(scenario_snapshot("compaction-io-titan"), RATE)
    assert sorted(f.entity.id for f in found) == ["tikv-1", "tikv-2", "tikv-3"]
    for f in found:
        assert f.dedup_key.endswith("/limit")
        (change,) = f.changes
        # limit_target(250 MiB/s, mean need ~96 MiB/s) = the template band's floor, 50% of 250
        assert (change.current, change.proposed) == ("10GiB", "125MiB")
        measures = {m.label: m for m in f.evidence.measures}
        assert measures["disk MiB/s utilisation p95"].value >= 0.9
        assert measures["compaction share of the volume's bytes at the ceiling"].value >= 0.5
        assert measures["correlation of compaction bytes/s with latency"].value >= 0.5


def test_a_limit_inside_the_band_is_not_proposed_again() -> None:
    snap = _variant("compaction-io-titan", _set({"rocksdb.rate-bytes-per-sec": "125MiB"}))
    assert _findings(snap, RATE) == []


# --- compaction-io-titan -------------------------------------------------------------------------------

_T = Option.model_construct(label="titan", changes=[], impact=None, notes=[])  # type: ignore[arg-type]
_Z = Option.model_construct(label="zstd", changes=[], impact=None, notes=[])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value_bytes", "titan", "zstd", "expected"),
    [
        (4096.0, _T, _Z, ["titan", "zstd"]),  # docs/reference/pingcap-guidance.md#titan-and-compression: rows > 512 B -> Titan
        (513.0, _T, _Z, ["titan", "zstd"]),
        (512.0, _T, _Z, ["zstd"]),  # PingCAP: Titan not applicable at or below 512 B
        (200.0, _T, _Z, ["zstd"]),
        (None, _T, _Z, ["zstd", "titan"]),  # unknown: the reversible fix first
        (4096.0, None, _Z, ["zstd"]),  # Titan already takes these values
    ],
)
def test_rank_options_follows_seed_002(
    value_bytes: float | None, titan: Option | None, zstd: Option | None, expected: list[str]
) -> None:
    assert [o.label for o in rank_options(value_bytes, titan, zstd)] == expected


def test_titan_scenario_offers_zstd_then_titan() -> None:
    found = _findings(scenario_snapshot("compaction-io-titan"), TITAN)
    assert sorted(f.entity.id for f in found) == ["tikv-1", "tikv-2", "tikv-3"]
    for f in found:
        measures = {m.label: m for m in f.evidence.measures}
        assert measures["MiB/s utilisation p95"].value >= 0.9  # gp3 at 250 MiB/s
        assert measures["compaction share of the bytes at the ceiling"].value > 0.85
        zstd, titan = f.options
        assert f.changes == zstd.changes  # value size unknown in the snapshot: reversible option first
        (z,) = zstd.changes
        assert z.key == "rocksdb.defaultcf.compression-per-level"
        assert z.current == ["no", "no", "lz4", "lz4", "lz4", "zstd", "zstd"]  # docs/reference/tikv-config.md#keys-and-defaults default
        assert z.proposed == ALL_ZSTD and z.online is False
        t = {c.key: c for c in titan.changes}
        assert (t["rocksdb.titan.enabled"].current, t["rocksdb.titan.enabled"].proposed) == (False, True)
        assert t["rocksdb.titan.enabled"].online is False  # docs/reference/tikv-config.md#online-changes
        # v8.5.1 default min-blob-size is 32KB (since v7.6.0); docs/reference/pingcap-guidance.md#titan-and-compression: 512B-1KB
        assert (
            t["rocksdb.defaultcf.titan.min-blob-size"].current,
            t["rocksdb.defaultcf.titan.min-blob-size"].proposed,
        ) == ("32KiB", "1KiB")
        assert t["rocksdb.defaultcf.titan.min-blob-size"].online is True
        assert t["rocksdb.defaultcf.titan.blob-file-compression"].proposed == "zstd"
        assert any("512 B" in n for n in f.notes)


def test_titan_on_a_v7_5_cluster_only_needs_enabling() -> None:
    """Clusters created before v7.6.0: Titan off, min-blob-size 1KB already (docs/reference/tikv-config.md#keys-and-defaults)."""

    def v75(d: dict[str, Any]) -> None:
        d["cluster"]["tikv_version"] = "v7.5.0"
        del d["nodes"][0]["config"]["rocksdb.titan.enabled"]

    f = _findings(_variant("compaction-io-titan", v75), TITAN)[0]
    titan = f.options[1]
    assert {c.key for c in titan.changes} == {
        "rocksdb.titan.enabled",
        "rocksdb.defaultcf.titan.blob-file-compression",
    }


def test_titan_with_1kib_blobs_clears_the_bottleneck() -> None:
    snap = _variant(
        "compaction-io-titan",
        _set({"rocksdb.titan.enabled": True, "rocksdb.defaultcf.titan.min-blob-size": "1KiB"}),
    )
    ctx = Context(snap)
    for node in snap.nodes:
        path = data_path(ctx, node)
        assert path is not None and p95(path.mibps_util) < 0.5
    assert _findings(snap, TITAN) == [] and _findings(snap, RATE) == []


def test_near_miss_at_80_percent_of_the_throughput_ceiling_is_silent() -> None:
    """The same load on a 300 MiB/s gp3: p95 at ~80% of the ceiling, 89% of the 90% threshold."""
    snap = scenario_snapshot("near-miss-tikv-compaction-80pct")
    ctx = Context(snap)
    for node in snap.nodes:
        path = data_path(ctx, node)
        assert path is not None and 0.75 < p95(path.mibps_util) < 0.85
    assert _findings(snap, TITAN) == [] and _findings(snap, RATE) == []


def test_healthy_is_silent() -> None:
    snap = scenario_snapshot("healthy")
    assert _findings(snap, TITAN) == [] and _findings(snap, RATE) == []


def test_brief_write_spike_is_silent() -> None:
    """The near-miss load with a 15-minute write spike to 1.25×: the volume touches its ceiling only briefly.

    (A bigger spike leaves a compaction backlog that keeps the volume at its ceiling for more than 30 minutes
    after it: that is sustained, and the rule rightly fires.)
    """

    def mutate(d: dict[str, Any]) -> None:
        d["workload"]["spikes"] = [
            {"at_hour": 14, "duration_minutes": 15, "factor": 1.25, "applies_to": "writes"}
        ]

    snap = _variant("near-miss-tikv-compaction-80pct", mutate)
    for node in snap.nodes:
        path = data_path(Context(snap), node)
        assert path is not None and float(path.mibps_util.max()) >= 0.9
    assert _findings(snap, TITAN) == [] and _findings(snap, RATE) == []
