"""disk-low-space, filesystem-not-grown and projected-ceiling on simulated snapshots.

The disk series are shaped as TiKV reports them (tikv_store_size_bytes{type="capacity"|"available"}: capacity =
the data filesystem's size, available = min(capacity - used, free space); components/raftstore/src/store/worker/
pd.rs) and as node_exporter's filesystem collector does; the projections as the projections job stores them.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from advisor_fixtures import of_rule, scenario_snapshot
from headroom.domain.advisor import advise
from headroom.domain.advisor.rules._common import TARGET_UTILISATION
from headroom.domain.advisor.rules.disk import PD_HIGH_SPACE_RATIO, PD_LOW_SPACE_RATIO
from headroom.domain.advisor.whatif import what_if
from headroom.domain.forecast.crossing import band_crossing
from headroom.domain.model import EntityRef
from headroom.domain.snapshot.schema import Entity, ForecastBand, ProjectedCeiling, Snapshot
from headroom.domain.snapshot.views import disk_view

GIB = 1024.0**3


def _replace(snap: Snapshot, node_id: str, metric: str, values: np.ndarray, labels: dict[str, str] | None = None) -> Snapshot:
    series = []
    for s in snap.series:
        if s.entity.id == node_id and s.metric == metric and (labels is None or s.labels == labels):
            s = s.model_copy(update={"values": [float(v) for v in values]})
        series.append(s)
    return snap.model_copy(update={"series": series})


def _used(snap: Snapshot, node_id: str, share: float) -> Snapshot:
    """The store with `share` of its capacity used (available = capacity × (1 - share))."""
    cap = disk_view(snap, node_id).capacity
    return _replace(snap, node_id, "tikv.store_available_bytes", cap * (1.0 - share))


def _band(snap: Snapshot, level: float, per_day: float, days: int = 90) -> ForecastBand:
    t = [snap.window.end + timedelta(hours=6 * i) for i in range(days * 4)]
    point = [level + per_day * i / 4 for i in range(len(t))]
    return ForecastBand(t=t, point=point, low=[0.9 * p for p in point], high=[1.1 * p for p in point])


def _projection(snap: Snapshot, kind: str, eid: str, metric: str, unit: str, ceiling: float, band: ForecastBand,
                hours: int = 28 * 24) -> ProjectedCeiling:
    return ProjectedCeiling(
        entity=Entity(kind=kind, id=eid), metric=metric, unit=unit, ceiling=ceiling,  # type: ignore[arg-type]
        ceiling_source="test", method="ets-weekly", history_hours=hours, level_now=band.point[0],
        growth_percent_per_week=5.0, days=None, days_low=None, days_high=None, horizon_days=90.0, interval=0.9,
        fitted_at=snap.window.end, history_end=snap.window.end, band=band,
    )


@pytest.fixture(scope="module")
def healthy() -> Snapshot:
    return scenario_snapshot("healthy")


def test_the_simulated_store_reports_capacity_and_the_filesystem_as_tikv_and_node_exporter_do(healthy: Snapshot) -> None:
    node = healthy.nodes[0]
    disk = disk_view(healthy, node.id)
    assert disk.has_store_stats and disk.mountpoint == "/data"  # storage.data-dir /data/tikv is on /data
    assert disk.volume_gib == 1000.0
    capacity = disk.capacity[-1]
    assert capacity == pytest.approx(disk.fs_size[-1])  # raftstore.capacity unset: the filesystem's size
    assert capacity < 1000 * GIB  # the filesystem's metadata is not capacity
    # available = min(capacity - used, free): the raft log is on its own volume here
    assert disk.available[-1] == pytest.approx(capacity - disk.used[-1])
    assert of_rule(advise(healthy), "disk-low-space") == []
    assert of_rule(advise(healthy), "filesystem-not-grown") == []


@pytest.mark.parametrize(
    ("share", "severity"),
    [(0.69, None), (0.71, "warning"), (0.79, "warning"), (0.81, "critical"), (0.97, "critical")],
)
def test_low_space_follows_pds_lines(healthy: Snapshot, share: float, severity: str | None) -> None:
    node = healthy.nodes[0]
    found = of_rule(advise(_used(healthy, node.id, share), rules=["disk-low-space"]), "disk-low-space")
    if severity is None:
        assert found == []
        return
    assert [f.entity.id for f in found] == [node.id]
    f = found[0]
    assert f.severity == severity
    assert f.evidence.measures[0].value == pytest.approx(share, abs=1e-3)
    assert f.evidence.measures[0].limit == PD_LOW_SPACE_RATIO
    assert "pd-configuration-file" in f.evidence.measures[0].source
    # the fix: the data volume grown online so today's use sits at the high-space line
    (change,) = [c for c in f.changes if c.key == "volume.size"]
    assert change.entity is not None and change.entity.id == node.data_volume_ids[0] and change.online
    capacity_gib = disk_view(healthy, node.id).capacity[-1] / GIB
    used_gib = share * capacity_gib
    assert change.proposed * capacity_gib / 1000.0 >= used_gib / PD_HIGH_SPACE_RATIO - 1e-6
    assert change.proposed - used_gib / PD_HIGH_SPACE_RATIO / (capacity_gib / 1000.0) < 10.0 + 1e-6  # 10 GiB steps
    # gp3 storage is $0.08 per GB-month (AWS: Amazon EBS pricing, us-east-1)
    assert f.impact.monthly_cost_delta_usd == pytest.approx((change.proposed - 1000) * 0.08, abs=0.01)
    assert any("resize2fs" in n and "6 hours" in n for n in f.options[0].notes)
    assert any("scale out" in n for n in f.notes)


def test_within_the_reserve_is_critical_even_on_a_huge_disk(healthy: Snapshot) -> None:
    node = healthy.nodes[0]
    cap = disk_view(healthy, node.id).capacity
    snap = _replace(healthy, node.id, "tikv.store_available_bytes", np.minimum(cap * 0.3, 0.04 * cap))
    (f,) = of_rule(advise(snap, rules=["disk-low-space"]), "disk-low-space")
    assert f.severity == "critical" and "reserve" in f.title
    # max(reserve-space 5GB, 5 % of capacity): the 5 % wins on a ~985 GiB filesystem
    assert f.evidence.measures[1].limit == pytest.approx(0.05 * cap[-1] / GIB, abs=0.1)


def test_a_projection_within_30_days_warns_and_sizes_for_90(healthy: Snapshot) -> None:
    node = healthy.nodes[0]
    snap = _used(healthy, node.id, 0.60)
    capacity_gib = disk_view(snap, node.id).capacity[-1] / GIB
    low_line = PD_LOW_SPACE_RATIO * capacity_gib
    used = 0.6 * capacity_gib
    band = _band(snap, used, per_day=(low_line - used) / 20.0)  # the point path crosses in 20 days
    snap = snap.model_copy(update={"projections": [_projection(snap, "node", node.id, "used_gib", "GiB", low_line, band)]})
    (f,) = of_rule(advise(snap, rules=["disk-low-space"]), "disk-low-space")
    assert f.severity == "warning" and "in 20 days" in f.title
    # a projection to each line: PD's low-space line (20 days), TiKV's reserve, the disk full, in that order
    forecast, reserve, full = f.evidence.forecasts
    assert forecast.label == "PD low-space line"
    assert forecast.within_seconds == pytest.approx(20 * 86400, rel=0.02)
    assert forecast.earliest is not None and forecast.earliest < forecast.at  # the band's upper edge is earlier
    per_day = (low_line - used) / 20.0
    reserve_gib = max(5.0, 0.05 * capacity_gib)  # max(reserve-space 5GB, 5 % of capacity): TiKV's template
    assert reserve.label.startswith("TiKV's reserve") and reserve.value == pytest.approx(capacity_gib - reserve_gib, abs=0.1)
    assert reserve.within_seconds == pytest.approx((capacity_gib - reserve_gib - used) / per_day * 86400, rel=0.03)
    assert full.within_seconds > reserve.within_seconds > forecast.within_seconds
    # sized for the band's upper edge 90 days out at the high-space line
    horizon = max(band.high)
    (change,) = f.changes
    assert change.proposed * capacity_gib / 1000.0 >= horizon / PD_HIGH_SPACE_RATIO - 1e-6
    # 5 days: critical
    fast = _band(snap, used, per_day=(low_line - used) / 5.0)
    snap5 = snap.model_copy(update={"projections": [_projection(snap, "node", node.id, "used_gib", "GiB", low_line, fast)]})
    (f5,) = of_rule(advise(snap5, rules=["disk-low-space"]), "disk-low-space")
    assert f5.severity == "critical"


def test_a_volume_larger_than_its_filesystem_says_grow_the_filesystem(healthy: Snapshot) -> None:
    node = healthy.nodes[0]
    vid = node.data_volume_ids[0]
    # the volume was resized 1,000 -> 1,500 GiB in AWS; nobody ran resize2fs, so TiKV and the host still see ~985
    volumes = [v.model_copy(update={"size_gib": 1500.0}) if v.id == vid else v for v in healthy.volumes]
    snap = healthy.model_copy(update={"volumes": volumes})
    (f,) = of_rule(advise(snap, rules=["filesystem-not-grown"]), "filesystem-not-grown")
    assert f.entity.id == node.id and f.severity == "warning"
    assert "1,500 GiB" in f.title and "(/data)" in f.title
    assert f.impact.after == 1500.0 and f.impact.before == pytest.approx(985.0, abs=1.0)
    assert "xfs_growfs -d /data" in f.notes[0] and "recognize-expanded-volume-linux" in f.notes[0]
    # an ordinary volume (filesystem ~1.5 % smaller) is not flagged
    assert of_rule(advise(healthy, rules=["filesystem-not-grown"]), "filesystem-not-grown") == []


def test_projected_iops_ceiling_warns_sizes_for_90_days_and_a_what_if_clears_it(healthy: Snapshot) -> None:
    vid = healthy.nodes[0].data_volume_ids[0]  # gp3 1,000 GiB at 4,000 IOPS
    band = _band(healthy, 2000.0, per_day=100.0)  # 2,000 IOPS growing 100 a day: 4,000 in 20 days
    proj = _projection(healthy, "volume", vid, "iops", "IOPS", 4000.0, band)
    snap = healthy.model_copy(update={"projections": [proj]})
    (f,) = of_rule(advise(snap, rules=["projected-ceiling"]), "projected-ceiling")
    assert f.severity == "warning" and f.entity.id == vid
    assert "in 20 days" in f.title
    crossing = band_crossing(band.t, band.point, band.low, band.high, 4000.0, snap.window.end)
    assert crossing.days == pytest.approx(20.0)
    # sized for 90 days: the band's upper edge up to day 90 at 75 % of the new ceiling
    need = max(h for t, h in zip(band.t, band.high, strict=True) if t <= snap.window.end + timedelta(days=90))
    iops = {c.key: c for c in f.changes}["volume.iops"]
    assert iops.proposed >= need / TARGET_UTILISATION
    assert iops.proposed < need / TARGET_UTILISATION + 500  # IOPS in steps of 500
    assert f.evidence.forecasts[0].value == 4000.0
    # the same projection against a volume modified to that size: no finding (judged by today's limit)
    result = what_if(snap, [iops], findings_before=[f])
    assert f.dedup_key in result.to_dict()["resolved"]
    assert all(g.rule != "projected-ceiling" for g in result.findings_after)
    # a ceiling 50 days out: nothing (beyond 30 days)
    slow = _projection(healthy, "volume", vid, "iops", "IOPS", 4000.0, _band(healthy, 2000.0, per_day=40.0))
    assert of_rule(advise(healthy.model_copy(update={"projections": [slow]}), rules=["projected-ceiling"]),
                   "projected-ceiling") == []


def test_projected_instance_ceiling_proposes_a_larger_size(healthy: Snapshot) -> None:
    inst = healthy.instances[0]  # m6i.4xlarge: baseline 625 MB/s = 596 MiB/s, 20,000 IOPS (AWS)
    band = _band(healthy, 300.0, per_day=12.0)
    proj = _projection(healthy, "instance", inst.id, "mibps", "MiB/s", 596.0, band)
    snap = healthy.model_copy(update={"projections": [proj]})
    (f,) = of_rule(advise(snap, rules=["projected-ceiling"]), "projected-ceiling")
    assert f.severity == "warning" and "in 25 days" in f.title  # (596 - 300) / 12 = 24.7 days
    # 90 days: (300 + 90 x 12) x 1.1 (upper band) / 0.75 = 2,024 MiB/s -> m6i.16xlarge's 20 Gbps (AWS)
    change = {c.key: c for c in f.changes}["instance.type"]
    assert change.current == "m6i.4xlarge" and change.proposed == "m6i.16xlarge"
    fast = _projection(healthy, "instance", inst.id, "mibps", "MiB/s", 596.0, _band(healthy, 500.0, per_day=20.0))
    (g,) = of_rule(advise(healthy.model_copy(update={"projections": [fast]}), rules=["projected-ceiling"]),
                   "projected-ceiling")
    assert g.severity == "critical"  # 4.8 days
    assert EntityRef.model_validate(f.entity.model_dump()).kind == "instance"


def test_a_what_if_resize_grows_what_tikv_reports_and_clears_low_space(healthy: Snapshot) -> None:
    node = healthy.nodes[0]
    snap = _used(healthy, node.id, 0.85)
    (f,) = of_rule(advise(snap, rules=["disk-low-space"]), "disk-low-space")
    (resize,) = f.changes
    result = what_if(snap, [resize], findings_before=[f])
    assert f.dedup_key in result.to_dict()["resolved"]
    before, after = disk_view(snap, node.id), disk_view(result.snapshot_after, node.id)
    added = (resize.proposed - resize.current) * GIB * before.capacity[-1] / (1000 * GIB)  # the filesystem's share
    assert after.capacity[-1] == pytest.approx(before.capacity[-1] + added)
    assert after.available[-1] == pytest.approx(before.available[-1] + added)
    assert 1 - after.available[-1] / after.capacity[-1] <= PD_HIGH_SPACE_RATIO + 1e-3


def test_a_ceiling_reached_already_or_within_a_day_is_left_to_the_rules_of_the_present(healthy: Snapshot) -> None:
    vid = healthy.nodes[0].data_volume_ids[0]
    soon = _projection(healthy, "volume", vid, "iops", "IOPS", 4000.0, _band(healthy, 3900.0, per_day=200.0))
    reached = soon.model_copy(update={"days": 0.0})
    for proj in (soon, reached):  # 0.5 days away; reached when fitted
        snap = healthy.model_copy(update={"projections": [proj]})
        assert of_rule(advise(snap, rules=["projected-ceiling"]), "projected-ceiling") == []
