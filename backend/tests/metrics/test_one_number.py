"""One number everywhere: for the demo cluster and every example scenario, through the real API, every surface that
shows a ceiling or a utilisation of a volume or an instance agrees with the advisor's own number for the same
window, to the displayed precision:

- the glance table (GET .../metrics/overview): the peak use of the ceiling in force, and the ceiling in force now;
- the Metrics panels (GET .../metrics): their ceilings, and the "Ceiling in force" line point by point;
- the findings (GET .../findings): every limit a volume's or instance's evidence compares to is one of that
  entity's ceilings (or the 90 % line of one);
- what-if (POST .../what-if): the "before" ceiling of a volume;
- the fleet's headroom score (GET /fleet): 100 - the glance's highest peak;
- the Prometheus alert rules (GET .../alert-rules): 90 % of the data volumes' sustained ceiling.

The advisor's number is computed by the advisor's own Context (headroom.domain.advisor.context) on the snapshot the
store builds for the same window: a new surface that shows a ceiling joins this test.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from headroom.domain.advisor.context import Context
from headroom.domain.advisor.rules._common import instance_ceiling, instance_io_series
from headroom.domain.snapshot.scenario import load_scenario
from headroom.findings import service as findings_service
from headroom.sources.demo import service as demo
from headroom.timeseries.snapshots import build_snapshot
from helpers import sign_up

REPO = Path(__file__).resolve().parents[3]
SCENARIOS = sorted(p.name for p in (REPO / "examples" / "scenarios").glob("*.yaml"))
# The demo scenario's afternoon (the gp2 nodes' buckets are empty, the hot node is pinned): every scenario is read
# over the same 2 hours, long enough for a 30-minute sustained run and short enough to keep the test quick.
END = dt.datetime(2026, 11, 2, 18, 0, tzinfo=dt.UTC)
HOURS = 2
IO_METRICS = ("data_iops", "data_throughput", "raft_iops", "raft_throughput", "instance_iops", "instance_throughput")


def _advisor(ctx: Context, metric: str, entity: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The advisor's (values, ceiling in force) of one glance cell, on the window's grid."""
    if metric.startswith(("data_", "raft_")):
        view = ctx.volume_io(entity)
        if view is None:
            return None
        if metric.endswith("iops"):
            ceiling = ctx.volume_iops_ceiling(entity)
            return (view.counted_iops, ceiling) if ceiling is not None else None
        ceiling = ctx.volume_mibps_ceiling(entity)
        return (view.mibps, ceiling) if ceiling is not None else None
    lim = ctx.instance_limits(entity)
    series = instance_io_series(ctx, entity)
    if lim is None or series is None:
        return None
    n = len(series[0])
    if metric == "instance_iops":
        return series[0], instance_ceiling(ctx, entity, lim.baseline_iops, lim.max_iops, "ec2.ebs_io_balance", n)
    return series[1], instance_ceiling(ctx, entity, lim.baseline_throughput_mibps, lim.max_throughput_mibps,
                                       "ec2.ebs_byte_balance", n)


def _entity(node: dict[str, Any], metric: str) -> str | None:
    if metric.startswith("data_"):
        return node["data_volume"]["volume_id"] if node["data_volume"] else None
    if metric.startswith("raft_"):
        return node["raft_volume"]["volume_id"] if node["raft_volume"] else None
    return node["instance_id"]


@pytest.fixture()
def seeded(request: Any, client: Any, db: Any, clock: Any) -> dict[str, Any]:
    owner = sign_up(client, org=f"One number {request.param}")
    org_id = uuid.UUID(owner.org_id)
    scenario = load_scenario(REPO / "examples" / "scenarios" / request.param)
    cluster = demo.seed_demo_cluster(db, org_id, scenario=scenario)
    start = END - dt.timedelta(hours=HOURS)
    demo.ingest_window(db, cluster, scenario, start, END)
    findings_service.advise_cluster(db, cluster, now=END, window=END - start)
    db.commit()
    clock.now = END
    snapshot = build_snapshot(db, org_id, cluster.id, start=start, end=END)
    return {"owner": owner, "cluster_id": str(cluster.id), "start": start, "ctx": Context(snapshot, now=END),
            "scenario": request.param}


@pytest.mark.parametrize("seeded", SCENARIOS, indirect=True)
def test_every_surface_shows_the_advisors_ceiling_and_utilisation(seeded: dict[str, Any]) -> None:
    owner, cid, start, ctx = seeded["owner"], seeded["cluster_id"], seeded["start"], seeded["ctx"]
    window = {"start": start.isoformat(), "end": END.isoformat()}
    overview = owner.get(f"/api/v1/clusters/{cid}/metrics/overview", params=window)
    assert overview.status_code == 200, overview.text
    assert overview.json()["resolution_seconds"] == 60  # the advisor's 1-minute points

    ceilings_of: dict[str, set[float]] = {}  # entity -> every ceiling a surface may show for it
    sustained_of: dict[str, float] = {}  # volume -> its sustained or provisioned IOPS ceiling
    checked = kinds_now = 0
    seen_kinds: set[str] = set()
    for node in overview.json()["nodes"]:
        metrics = owner.get(f"/api/v1/clusters/{cid}/metrics", params={
            **window, "node_id": node["node"]["id"], "points": 2000, "panel": list(IO_METRICS)})
        assert metrics.status_code == 200, metrics.text
        panels = {p["id"]: p for p in metrics.json()["panels"]}
        for cell in node["utilisation"]:
            metric = cell["metric"]
            entity = _entity(node["node"], metric)
            advised = _advisor(ctx, metric, entity) if entity else None
            panel = panels.get(metric)
            if advised is None or panel is None or cell["peak_percent"] is None:
                continue
            values, ceiling = advised
            with np.errstate(invalid="ignore", divide="ignore"):
                ratio = np.where(ceiling > 0, values / ceiling, np.nan)
            # the glance: the peak use of the ceiling in force, as the table rounds it (a whole percent)
            assert round(cell["peak_percent"]) == round(float(np.nanmax(ratio)) * 100), (metric, entity)
            finite = np.flatnonzero(np.isfinite(ceiling) & np.isfinite(values))
            assert cell["ceiling_now"]["value"] == pytest.approx(float(ceiling[finite[-1]])), (metric, entity)
            seen_kinds.add(cell["ceiling_now"]["kind"])
            kinds_now += 1
            # the panel's reference lines: the same ceilings, each with its kind and source
            lines = {c["value"] for c in panel["ceilings"]}
            assert float(ceiling[finite[-1]]) in lines and all(c["kind"] and c["source"] for c in panel["ceilings"])
            ceilings_of.setdefault(entity, set()).update(lines)
            if metric.endswith("iops") and metric != "instance_iops":
                sustained_of[entity] = next(c["value"] for c in panel["ceilings"] if c["kind"] != "burst")
            # the panel's "Ceiling in force" line, point by point, where the volume or instance bursts
            line = next((s for s in panel["series"] if s["id"] == f"{metric}_ceiling_in_force"), None)
            if any(c["kind"] == "burst" for c in panel["ceilings"]):
                assert line is not None, (metric, entity)
                grid = int(start.timestamp())
                for t, v in zip(line["t"], line["values"], strict=True):
                    i = (t - grid) // 60
                    if 0 <= i < len(ceiling) and np.isfinite(ceiling[i]):
                        assert v == pytest.approx(float(ceiling[i]), rel=1e-5), (metric, entity, t)  # 6 digits
            checked += 1
    assert checked, "no surface showed a ceiling"

    # findings: every limit the evidence of a volume or an instance compares to is one of its ceilings
    findings = owner.get(f"/api/v1/clusters/{cid}/findings", params={"limit": 200}).json()["items"]
    for f in findings:
        detail = owner.get(f"/api/v1/findings/{f['id']}").json()
        entity = detail["entity_id"]
        if detail["entity_kind"] not in ("volume", "instance") or entity not in ceilings_of:
            continue
        allowed = ceilings_of[entity]
        for m in detail["evidence"]["measures"]:
            if m["limit"] is not None and m["unit"] in ("IOPS", "MiB/s"):
                assert any(math.isclose(m["limit"], c, rel_tol=1e-6) or math.isclose(m["limit"], 0.9 * c, rel_tol=1e-6)
                           for c in allowed), (detail["rule"], m, allowed)

    # what-if: the "before" ceiling of a volume of each type is its sustained ceiling on the chart (one what-if per
    # type: each re-runs the advisor over the last day)
    tried: set[str] = set()
    for volume, sustained in sustained_of.items():
        vol = ctx.volume(volume)
        if vol.type not in ("gp2", "gp3", "io1", "io2") or vol.type in tried:
            continue
        tried.add(vol.type)
        # a change that moves the IOPS ceiling: gp2 grows with its size (3 IOPS/GiB), the others are provisioned
        key, proposed = ("volume.size", int(vol.size_gib * 2)) if vol.type == "gp2" else ("volume.iops", sustained + 500)
        r = owner.post(f"/api/v1/clusters/{cid}/what-if", json={"changes": [
            {"target": "aws", "key": key, "entity": {"kind": "volume", "id": volume}, "proposed": proposed}]})
        assert r.status_code == 200, r.text
        before = [c for c in r.json()["ceilings"] if c["entity_id"] == volume and c["dimension"] == "iops"]
        assert before and before[0]["ceiling"] == pytest.approx(sustained), (volume, before)

    # the alert rules: 90 % of the data volumes' sustained IOPS ceiling
    rules = owner.get(f"/api/v1/clusters/{cid}/alert-rules")
    assert rules.status_code == 200, rules.text
    thresholds = {float(x) for x in re.findall(r">= 0\.9 \* ([0-9.]+)$", "\n".join(
        r["expr"] for g in yaml.safe_load(rules.text)["groups"] for r in g["rules"]
        if r["alert"] == "HeadroomDataVolumeIopsAtCeiling"), flags=re.M)}
    data_volumes = {n["node"]["data_volume"]["volume_id"] for n in overview.json()["nodes"] if n["node"]["data_volume"]}
    assert thresholds <= {sustained_of[v] for v in data_volumes if v in sustained_of} | {0.0} or not thresholds

    if seeded["scenario"] == "demo.yaml":
        # the demo's gp2 disks: bucket empty, judged against the 1,050 IOPS baseline (not 35 % of 3,000)
        assert "sustained" in seen_kinds
        gp2 = [c for n in overview.json()["nodes"] for c in n["utilisation"]
               if c["metric"] == "data_iops" and c["ceiling_now"] and c["ceiling_now"]["label"] == "gp2 baseline IOPS"]
        assert gp2 and all(c["peak_percent"] >= 99 for c in gp2), gp2


def test_the_fleet_score_is_the_glance_tables_highest_peak(client: Any, db: Any, clock: Any) -> None:
    owner = sign_up(client, org="One number fleet")
    org_id = uuid.UUID(owner.org_id)
    scenario = load_scenario(REPO / "examples" / "scenarios" / "demo.yaml")
    cluster = demo.seed_demo_cluster(db, org_id, scenario=scenario)
    demo.ingest_window(db, cluster, scenario, END - dt.timedelta(hours=HOURS), END)
    db.commit()
    clock.now = END
    fleet = owner.get("/api/v1/fleet")
    assert fleet.status_code == 200, fleet.text
    [item] = [i for i in fleet.json()["items"] if i["id"] == str(cluster.id)]
    window = {"start": fleet.json()["window_start"], "end": fleet.json()["window_end"]}
    overview = owner.get(f"/api/v1/clusters/{cluster.id}/metrics/overview", params=window).json()
    peaks = [c for n in overview["nodes"] for c in n["utilisation"] if c["peak_percent"] is not None]
    top = max(peaks, key=lambda c: c["peak_percent"])
    assert item["headroom_score"] == max(0, round(100 - top["peak_percent"]))
    assert item["tightest"]["ceiling"] == top["ceiling"]["label"]
