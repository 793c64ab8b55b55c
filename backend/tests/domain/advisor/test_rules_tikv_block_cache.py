"""block-cache-size: shrink at the read-IOPS ceiling (docs/reference/pingcap-guidance.md#block-cache-on-ebs), grow to 45% (template 30-50%), shared-host OOM."""

from __future__ import annotations

import re

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np
import pytest
import yaml
from advisor_fixtures import SCENARIOS, scenario_snapshot
from headroom.domain.advisor import Finding, advise
from headroom.domain.advisor.context import Context, p95
from headroom.domain.advisor.rules._tikv_helpers import data_path
from headroom.domain.advisor.rules.block_cache import POOR_HIT_RATIO, grow_target_bytes, shrink_target_bytes
from headroom.domain.snapshot.scenario import scenario_from_dict
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.snapshot.simulate import simulate

RULE = "block-cache-size"
GIB = 1024**3


def _doc(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text())
    return loaded


def _variant(name: str, mutate: Callable[[dict[str, Any]], None], hours: float = 24.0) -> Snapshot:
    doc = _doc(name)
    mutate(doc)
    return simulate(scenario_from_dict(doc), hours=hours, seed=0)


def _findings(snapshot: Snapshot) -> list[Finding]:
    return advise(snapshot, rules=[RULE], cluster_wide=False)  # one store at a time


@lru_cache(maxsize=4)
def _read_heavy() -> tuple[Finding, ...]:
    return tuple(_findings(scenario_snapshot("block-cache-read-heavy-at-ceiling")))


# --- pure sizing, from the cited sources ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("memory_gib", "expected_gib"),
    [
        (32, 4),  # docs/reference/pingcap-guidance.md#block-cache-on-ebs: "we reserve 4 GB for block cache in EC2 instances with 32 GB memory"
        (64, 8),  # the same 1/8 of memory
        (16, 2),
        (8, 1),
        (4, 1),  # never below 1 GiB
    ],
)
def test_shrink_target_is_pingcaps_4_of_32(memory_gib: int, expected_gib: int) -> None:
    assert shrink_target_bytes(memory_gib * GIB) == expected_gib * GIB


@pytest.mark.parametrize(
    ("memory_gib", "expected_gib"),
    [
        (128, 57),  # docs/reference/tikv-config.md#keys-and-defaults: 45% of memory (57.6 GiB), whole GiB
        (64, 28),
        (32, 14),
    ],
)
def test_grow_target_is_tikvs_45_percent_default(memory_gib: int, expected_gib: int) -> None:
    assert grow_target_bytes(memory_gib * GIB) == expected_gib * GIB


# --- shrink: read-heavy at the IOPS ceiling ----------------------------------------------------------


def test_read_heavy_at_ceiling_shrinks_to_4gib_on_every_node() -> None:
    found = _read_heavy()
    assert sorted(f.entity.id for f in found) == ["tikv-1", "tikv-2", "tikv-3"]
    for f in found:
        assert f.dedup_key.endswith("/shrink")
        assert f.severity == "warning"
        (change,) = f.changes
        assert change.target == "tikv"
        assert change.key == "storage.block-cache.capacity"
        # docs/reference/tikv-config.md#keys-and-defaults: unset capacity = 45% of 32 GiB, in whole MiB as the simulator (and TiKV) reports it
        assert change.current == "14745MiB"
        assert change.proposed == "4GiB"  # PingCAP: 4 GB of 32 GB
        assert change.online is True  # docs/reference/tikv-config.md#online-changes: online since v4.0.3
        measures = {m.label: m for m in f.evidence.measures}
        util = measures["IOPS utilisation p95"]
        assert util.value >= 0.9 and util.limit == 0.9  # docs/reference/ebs-volume-types.md#performance-consistency: at the ceiling from 90%
        assert measures["counted IOPS p95"].limit == 3000.0  # gp3 baseline (docs/reference/ebs-volume-types.md#limits-per-volume-type)
        hit = measures["block-cache hit ratio (median)"]
        assert 0.15 < hit.value < POOR_HIT_RATIO
        assert measures["reads among I/Os at the ceiling"].value > 0.9
        assert f.evidence.longest_run_minutes is not None and f.evidence.longest_run_minutes >= 30
        # one unit style per text: the change keeps tikv.toml's "14745MiB" (the literal value), the sentences
        # write it as every other number there (14745 MiB = 14.4 GiB), never "14745MiB" beside "32 GiB"
        texts = [f.title, *f.evidence.corroboration, f.impact.summary if f.impact else ""]
        assert not any(re.search(r"\d(KiB|MiB|GiB)\b", t) for t in texts), texts
        full = [c for c in f.evidence.corroboration if c.startswith("the block cache is full")]
        assert full and full[0].endswith("of its 14.4 GiB at the ceiling"), full
        assert f.title.endswith("shrink it to 4 GiB")


def test_shrinking_as_proposed_takes_the_volume_off_its_iops_ceiling() -> None:
    """Re-simulate with the proposal: page cache holds compressed blocks, so fewer reads reach the disk."""
    before = scenario_snapshot("block-cache-read-heavy-at-ceiling")
    after = _variant(
        "block-cache-read-heavy-at-ceiling",
        lambda d: d["nodes"][0].setdefault("config", {}).update({"storage.block-cache.capacity": "4GiB"}),
    )
    ctx_b, ctx_a = Context(before), Context(after)
    for node in before.nodes:
        path_b, path_a = data_path(ctx_b, node), data_path(ctx_a, after.nodes[before.nodes.index(node)])
        assert path_b is not None and path_a is not None
        assert p95(path_a.iops_util) < 0.9 <= p95(path_b.iops_util)
    assert _findings(after) == []


# --- grow: memory-rich, far from the ceilings --------------------------------------------------------


def test_memory_rich_grows_to_the_45_percent_default() -> None:
    found = _findings(scenario_snapshot("block-cache-memory-rich"))
    assert sorted(f.entity.id for f in found) == ["tikv-1", "tikv-2", "tikv-3"]
    for f in found:
        assert f.dedup_key.endswith("/grow")
        assert f.severity == "info"
        (change,) = f.changes
        assert (change.current, change.proposed, change.online) == ("8GiB", "57GiB", True)
        measures = {m.label: m for m in f.evidence.measures}
        assert measures["block cache / memory"].value == pytest.approx(8 / 128)
        assert measures["block cache / memory"].limit == 0.30  # template: 30%-50%
        assert measures["IOPS utilisation p95"].value < 0.5
        assert measures["block-cache hit ratio (median)"].value < POOR_HIT_RATIO


def test_memory_rich_near_miss_inside_the_band_is_silent() -> None:
    """40 GiB of 128 GiB is 31%: just inside the template's 30-50%, nothing to raise."""
    snap = _variant(
        "block-cache-memory-rich",
        lambda d: d["nodes"][0]["config"].update({"storage.block-cache.capacity": "40GiB"}),
    )
    assert _findings(snap) == []


# --- shared host: OOM risk ---------------------------------------------------------------------------


def _shared(capacity: str | None) -> Snapshot:
    def mutate(d: dict[str, Any]) -> None:
        group = d["nodes"][0]
        group["count"] = 2
        group["tikv_per_host"] = 2
        if capacity is not None:
            group.setdefault("config", {})["storage.block-cache.capacity"] = capacity

    return _variant("healthy", mutate)


def test_two_tikv_with_unset_capacity_on_one_host_risk_oom() -> None:
    found = _findings(_shared(None))
    assert sorted(f.entity.id for f in found) == ["tikv-1", "tikv-2"]
    for f in found:
        assert f.severity == "critical"
        assert f.dedup_key.endswith("/shared-host")
        (change,) = f.changes
        # each defaults to 45% of the 64 GiB host; 45% / 2 of 64 GiB = 14.4 GiB -> 14GiB
        assert change.current == "29491MiB"
        assert change.proposed == "14GiB"
        total = f.evidence.measures[0]
        assert total.value == pytest.approx(2 * 29491 / 1024, rel=1e-6)
        assert total.limit == pytest.approx(0.6 * 64)  # memory-usage-limit = 5/3 of the cache (docs/reference/tikv-config.md#keys-and-defaults)
        assert any("looks unset" in c for c in f.evidence.corroboration)


def test_shared_host_near_miss_is_silent() -> None:
    """2 × 17 GiB = 53% of 64 GiB: 89% of the 60% limit (other aspects may still fire on this busier host)."""
    assert [f for f in _findings(_shared("17GiB")) if f.dedup_key.endswith("/shared-host")] == []


# --- silence -------------------------------------------------------------------------------------------


def test_healthy_is_silent() -> None:
    assert _findings(scenario_snapshot("healthy")) == []


def test_read_heavy_near_miss_at_80_percent_of_the_ceiling_is_silent() -> None:
    """3,700 reads/s puts p95 IOPS at ~80% of 3,000: 89% of the 90% threshold."""
    snap = scenario_snapshot("near-miss-tikv-read-iops-80pct")
    ctx = Context(snap)
    for node in snap.nodes:
        path = data_path(ctx, node)
        assert path is not None
        assert 0.75 < p95(path.iops_util) < 0.85
    assert _findings(snap) == []


def test_read_heavy_brief_spike_is_silent() -> None:
    """The near-miss load with a 20-minute spike to 1.5×: at the ceiling, but neither 30 min nor 5% of the day."""

    def mutate(d: dict[str, Any]) -> None:
        d["workload"]["spikes"] = [
            {"at_hour": 15, "duration_minutes": 20, "factor": 1.5, "applies_to": "reads"}
        ]

    snap = _variant("near-miss-tikv-read-iops-80pct", mutate)
    ctx = Context(snap)
    path = data_path(ctx, snap.nodes[0])
    assert path is not None and float(np.nanmax(path.iops_util)) >= 0.9  # the spike does reach the ceiling
    assert _findings(snap) == []


# --- shrink judged from PingCAP's evidence, not one hit-ratio cut-off -------------------------------


def _sixty_percent(capacity: str = "16GiB") -> Snapshot:
    """m5.2xlarge (32 GiB), half its memory in the block cache, a 60% hit ratio, reads at the gp3 ceiling.

    Simulator model (docs/snapshot.md, hit-ratio curve with k = 6): h(x) = 0.99 (1 − e^(−6x)) / (1 − e^(−6)).
    Working set 103 GiB, block cache 16 GiB: x = 0.155, h = 0.60 (block-cache hit ratio). The page cache is
    32 − 16 − 2.5 (TiKV) − 1 (OS) = 12.5 GiB of compressed blocks (× 2.5): memory covers (16 + 31.25) / 103
    = 0.46 of the working set, h = 0.93, so 7% of 35,000 lookups/s (× 1.35 at the diurnal peak) = 3,300 reads/s
    reach a gp3 volume with 3,000 IOPS (docs/reference/ebs-volume-types.md#limits-per-volume-type): at the ceiling.
    """

    def mutate(d: dict[str, Any]) -> None:
        d["workload"].update({"working_set_gib": 103, "cache_skew": 6.0, "reads_per_sec": 35000})
        d["nodes"][0].setdefault("config", {})["storage.block-cache.capacity"] = capacity

    return _variant("block-cache-read-heavy-at-ceiling", mutate)


@lru_cache(maxsize=1)
def _sixty() -> Snapshot:
    return _sixty_percent()


def test_sixty_percent_hit_ratio_at_the_read_ceiling_with_half_the_memory_shrinks() -> None:
    # The old rule needed a hit ratio under 50% and said nothing here. PingCAP (docs/reference/pingcap-guidance.md#block-cache-on-ebs):
    # read-heavy, the read set does not fit in the block cache, reads at the EBS limit -> tune the block cache
    # down; they kept 4 GB of 32 GB.
    found = _findings(_sixty())
    assert sorted(f.entity.id for f in found) == ["tikv-1", "tikv-2", "tikv-3"]
    for f in found:
        assert f.dedup_key.endswith("/shrink")
        (change,) = f.changes
        assert (change.current, change.proposed) == ("16GiB", "4GiB")
        measures = {m.label: m for m in f.evidence.measures}
        assert 0.55 < measures["block-cache hit ratio (median)"].value < 0.65
        assert measures["block-cache hit ratio (median)"].limit is None  # no hit-ratio cut-off any more
        # misses per disk read: 40% of 35,000 lookups miss (14,000/s) against ~3,000 disk reads/s: ~4.7
        feed = measures["block-cache misses per disk read at the ceiling"]
        assert feed.value > 3.0 and feed.limit == 0.5
        assert feed.source == "How Headroom decides: Block cache: when to shrink it, when to grow it"
        assert "50% of memory in the block cache" in f.title
        assert any("the block cache is full" in c for c in f.evidence.corroboration)


def test_sixty_percent_case_after_the_shrink_is_off_the_ceiling() -> None:
    # Block cache 4 GiB: page cache 32 − 4 − 3.5 = 24.5 GiB × 2.5 = 61 GiB; memory covers (4 + 61) / 103 = 0.63
    # of the working set, h = 0.97: 3% of lookups reach the disk, ~1,400 reads/s at the peak, under 2,700 (90%).
    after = _sixty_percent("4GiB")
    ctx = Context(after)
    for node in after.nodes:
        path = data_path(ctx, node)
        assert path is not None and p95(path.iops_util) < 0.9
    assert _findings(after) == []


def _with_series(snap: Snapshot, metric: str, scale: float) -> Snapshot:
    series = [
        s.model_copy(update={"values": [None if v is None else v * scale for v in s.values]})
        if s.metric == metric
        else s
        for s in snap.series
    ]
    return snap.model_copy(update={"series": series})


def test_a_block_cache_that_is_not_full_holds_the_read_set_and_is_left_alone() -> None:
    # The same node, but the size gauge shows the cache at half its capacity: the read set fits in it, the
    # disk reads come from elsewhere (PingCAP's condition "the read set can't fit in the block cache" fails).
    assert _findings(_with_series(_sixty(), "tikv.block_cache_size", 0.5)) == []


def test_misses_that_do_not_feed_the_disk_are_left_alone() -> None:
    # Misses cut to 5%: 700 misses/s against ~3,000 disk reads/s (0.23 < 0.5): the disk reads are not block
    # reads the cache missed (compaction, scans that bypass the cache); a smaller cache would not help.
    assert _findings(_with_series(_sixty(), "tikv.block_cache_miss", 0.05)) == []


# --- the chart draws the limit the table states ---------------------------------------------------------


def _iops_lines(f: Finding) -> list[tuple[float, str]]:
    """The IOPS reference lines of a finding's charts, once each (every data volume's series carries them)."""
    seen: list[tuple[float, str]] = []
    for s in f.evidence.series:
        for line in s.reference_lines:
            if line.unit == "IOPS" and (line.value, line.label) not in seen:
                seen.append((line.value, line.label))
    return seen


def test_a_gp2_store_at_its_baseline_is_charted_against_the_baseline_its_table_states() -> None:
    # The table said 1,050 IOPS while the chart's line said "IOPS ceiling: 3,000": the measure took the window's
    # lowest ceiling, the line its highest. 500 GiB gp2: baseline 3 IOPS/GiB = 1,500 IOPS, burst 3,000 IOPS (AWS
    # General Purpose SSD volumes); the stores read at the ceiling while the bucket is empty, at the baseline.
    found = _findings(scenario_snapshot("gp2-burst-depletion"))
    assert found
    for f in found:
        measure = next(m for m in f.evidence.measures if m.label == "counted IOPS p95")
        assert measure.limit == 1500.0
        assert _iops_lines(f) == [
            (1500.0, "data volume (gp2) baseline, the finding's limit"),
            (3000.0, "data volume (gp2) burst, while credits last"),
        ]
        # the table's words and the line's name the same limit, and the source says where it comes from
        assert measure.limit_label == "data volume (gp2) baseline"
        assert measure.source is not None and "general-purpose.html" in measure.source


def test_a_steady_ceiling_is_one_line_with_the_tables_value_and_words() -> None:
    # gp3 3,000 IOPS all window (AWS EBS volume types): one line, the table's limit, nothing to tell apart
    for f in _read_heavy():
        measure = next(m for m in f.evidence.measures if m.label == "counted IOPS p95")
        assert measure.limit == 3000.0
        assert _iops_lines(f) == [(3000.0, measure.limit_label)]
        assert measure.source is not None and "ebs-volume-types.html" in measure.source
