"""One number everywhere: for the demo cluster and every example scenario, through the real API, every surface that
shows a ceiling or a utilisation of a volume or an instance agrees with the advisor's own number for the same
window, to the displayed precision:

- the glance table (GET .../metrics/overview): the peak use of the ceiling in force, and the ceiling in force now;
- the Metrics panels (GET .../metrics): their ceilings, and the "Ceiling in force" line point by point;
- the findings (GET .../findings): every limit a volume's or instance's evidence compares to is one of that
  entity's ceilings (or the 90 % line of one), and a measure's ceiling (value, kind, source) is the advisor's own
  Ceiling of that entity and one the Metrics panel draws;
- what-if (POST .../what-if): the "before" ceiling of a volume, as a Ceiling equal to the advisor's sustained one;
- the fleet's headroom score (GET /fleet): 100 - the glance's highest peak;
- the glance's 7-day range: the peaks the fleet.score job stored are the ones it computes for the same window;
- the Prometheus alert rules (GET .../alert-rules): 90 % of the data volumes' sustained ceiling;
- the weekly email (the digest service's own render of the same org, cluster and findings): every ceiling, limit
  and utilisation it prints for a volume or an instance, as written (headroom.domain.units.format_quantity);
- the burst forecast: the glance's time to empty of a bucket equals the finding's on the same bucket;
- the apply plan (GET /findings/{id}/apply-plan): its predicted effect is the finding's impact, and the what-if of
  the same changes gives the same ceilings before and after, the same monthly cost and the same peak use of the
  limit before and after (physics.ceilings.headroom_pct, one figure to 0.01 points on every surface).

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
from headroom.domain.snapshot.labels import metric_label
from headroom.digest import service as digest_service
from headroom.domain.advisor.context import Context
from headroom.domain.advisor.rules._common import instance_ceiling, instance_io_series
from headroom.domain.units import format_quantity
from headroom.domain.model import Ceiling
from headroom.domain.physics.ceilings import sustained as sustained_ceiling
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
    # a scenario's file name, read over the window ending at END; or (file name, end of its window)
    name, end = request.param if isinstance(request.param, tuple) else (request.param, END)
    owner = sign_up(client, org=f"One number {name}")
    org_id = uuid.UUID(owner.org_id)
    scenario = load_scenario(REPO / "examples" / "scenarios" / name)
    cluster = demo.seed_demo_cluster(db, org_id, scenario=scenario)
    start = end - dt.timedelta(hours=HOURS)
    demo.ingest_window(db, cluster, scenario, start, end)
    findings_service.advise_cluster(db, cluster, now=end, window=end - start)
    db.commit()
    clock.now = end
    snapshot = build_snapshot(db, org_id, cluster.id, start=start, end=end)
    return {"owner": owner, "cluster_id": str(cluster.id), "start": start, "ctx": Context(snapshot, now=end),
            "scenario": name, "db": db, "org_id": org_id}


# What the email says of a volume's or an instance's limits (headroom.digest: its chart's words, the forecast
# sentence, the fix lines and the finding's title and impact), each a number with its unit as format_quantity
# writes it.
QUANTITY = r"(-?[\d,]+(?:\.\d+)? (?:IOPS|MiB/s))"
LIMIT_PHRASES = (
    re.compile(rf"of {QUANTITY}: "),  # the chart: "peak 125 MiB/s (100% of 125 MiB/s: current ceiling)"
    re.compile(rf"at or above {QUANTITY} \("),  # the chart: "100% of the time at or above 113 MiB/s (90% of ceiling)"
    re.compile(rf"at most (?:the )?{QUANTITY}"),  # the forecast: "serving at most the 1,050 IOPS baseline"
    re.compile(rf"\(<= the {QUANTITY} baseline\)"),
    # the provisioned ceiling a fix raises: "Fix: Set the provisioned throughput to 300 MiB/s (now 125 MiB/s)"
    re.compile(rf"Fix: Set the provisioned (?:IOPS|throughput) to -?[\d,]+(?:\.\d+)? (?:IOPS|MiB/s) \(now {QUANTITY}\)"),
    re.compile(rf"{QUANTITY} (?:ceiling|baseline)"),  # the title: "at >= 90% of its 125 MiB/s ceiling"
)
PEAK_SHARE = re.compile(rf"peak {QUANTITY} \(([\d.]+%) of {QUANTITY}: ")  # the chart's peak use of a limit
ITEM_ON = re.compile(r"^   On: .* · (volume|instance) (\S+)$", flags=re.M)


def _email_items(text: str) -> list[tuple[str, str, str]]:
    """The email's finding entries as (entity kind, entity id, the entry's text), from the text part."""
    entries = re.split(r"^\d+\. \[", text, flags=re.M)[1:]
    out = []
    for entry in entries:
        entry = entry.split("\nCluster page: ")[0]
        on = ITEM_ON.search(entry)
        if on is not None:
            out.append((on.group(1), on.group(2), entry))
    return out


def _check_email(seeded: dict[str, Any], ceilings_of: dict[str, set[float]],
                 peaks_of: dict[tuple[str, str], float], findings: list[dict[str, Any]]) -> int:
    """Every limit the weekly email prints for a volume or an instance is one of its ceilings (or the 90 % line of
    one) as the app writes it, and a chart's peak share is the glance's peak use; returns the numbers checked."""
    digest = digest_service.render(seeded["db"], seeded["org_id"], now=END, public_url="https://headroom.example")
    text = digest.text.replace("\r\n", "\n")
    assert digest.html and "Unsubscribe" not in text.split("Dashboard:")[0]
    impact_of = {(f["entity_id"], f["title"]): f for f in findings}
    checked = 0
    for _kind, entity, entry in _email_items(text):
        if entity not in ceilings_of:
            continue
        allowed = {format_quantity(v * share, unit) for v in ceilings_of[entity] for share in (1.0, 0.9)
                   for unit in ("IOPS", "MiB/s")}
        for phrase in LIMIT_PHRASES:
            for quantity in phrase.findall(entry):
                assert quantity in allowed, (seeded["scenario"], entity, quantity, phrase.pattern, entry)
                checked += 1
        for _peak, share, limit in PEAK_SHARE.findall(entry):
            unit = limit.split()[-1]
            glance = peaks_of.get((entity, unit))
            assert glance is not None and share == format_quantity(glance, "%"), (entity, share, glance, entry)
            checked += 1
        title = entry.split("] ", 1)[1].split("\n")[0]
        finding = impact_of.get((entity, title))
        impact = (finding or {}).get("impact") or {}
        if impact.get("before") is not None and impact.get("unit") in ("IOPS", "MiB/s") and "ceiling" in (
                impact.get("metric") or ""):
            # the impact's "before" is the entity's ceiling, and the line says it as the app does
            assert any(math.isclose(impact["before"], c, rel_tol=1e-6) for c in ceilings_of[entity]), (entity, impact)
            assert format_quantity(impact["before"], impact["unit"]).split()[0] in entry.split("Impact: ")[1]
            checked += 1
    return checked


@pytest.mark.parametrize("seeded", SCENARIOS, indirect=True)
def test_every_surface_shows_the_advisors_ceiling_and_utilisation(seeded: dict[str, Any]) -> None:
    owner, cid, start, ctx = seeded["owner"], seeded["cluster_id"], seeded["start"], seeded["ctx"]
    window = {"start": start.isoformat(), "end": END.isoformat()}
    overview = owner.get(f"/api/v1/clusters/{cid}/metrics/overview", params=window)
    assert overview.status_code == 200, overview.text
    assert overview.json()["resolution_seconds"] == 60  # the advisor's 1-minute points

    ceilings_of: dict[str, set[float]] = {}  # entity -> every ceiling a surface may show for it
    peaks_of: dict[tuple[str, str], float] = {}  # (entity, unit) -> the glance's peak use, %
    drawn_of: dict[str, set[tuple[float, str]]] = {}  # entity -> (value, kind) of every ceiling its panels draw
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
            peaks_of[(entity, "IOPS" if metric.endswith("iops") else "MiB/s")] = cell["peak_percent"]
            kinds_now += 1
            # the panel's reference lines: the same ceilings, each with its kind and source
            lines = {c["value"] for c in panel["ceilings"]}
            assert float(ceiling[finite[-1]]) in lines and all(c["kind"] and c["source"] for c in panel["ceilings"])
            ceilings_of.setdefault(entity, set()).update(lines)
            drawn_of.setdefault(entity, set()).update((c["value"], c["kind"]) for c in panel["ceilings"])
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

    # findings: every limit the evidence of a volume or an instance compares to is one of its ceilings; a measure
    # that names its ceiling names the advisor's own Ceiling of that entity (value, kind, source), one its panel draws
    findings = owner.get(f"/api/v1/clusters/{cid}/findings", params={"limit": 200}).json()["items"]
    details = [owner.get(f"/api/v1/findings/{f['id']}").json() for f in findings]
    # the burst forecast: the glance's (the Metrics panels' too: metrics.service.node_forecasts) and the finding's
    # on the same bucket are one computation (headroom.domain.advisor.buckets) on the same window: the advisor's
    # here (the glance reads the advisor's 24 h before END, which holds only these 2 h of data)
    # a forecast is labelled in words (the one metric label mapping): the glance's bucket ids map to it
    glance_burst = {(b["entity_id"], metric_label("ebs.burst_balance" if b["id"].endswith("_burst_balance")
                                                  else b["id"].replace("ec2_", "ec2.", 1))): b
                    for n in overview.json()["nodes"] for b in n["burst"]}
    forecasts_compared = 0
    for detail in details:
        for fc in detail["evidence"]["forecasts"]:
            if fc["kind"] != "burst_empty":
                continue
            shown = glance_burst.get((detail["entity_id"], fc["label"]))
            assert shown is not None, (detail["rule"], detail["entity_id"], fc, sorted(glance_burst))
            if fc["within_seconds"] is None:
                assert shown["seconds_to_empty"] is None, (detail["entity_id"], shown)
            else:
                assert shown["seconds_to_empty"] == pytest.approx(fc["within_seconds"], rel=1e-9, abs=1e-6), (
                    detail["rule"], detail["entity_id"], shown, fc)
            assert shown["balance_percent"] == pytest.approx(fc["balance_pct"]), (detail["entity_id"], shown, fc)
            forecasts_compared += 1
    if seeded["scenario"] in ("demo.yaml", "gp2-burst-depletion.yaml"):
        assert forecasts_compared, "no burst finding to compare with the glance"
    named = 0
    for detail in details:
        entity = detail["entity_id"]
        if detail["entity_kind"] not in ("volume", "instance") or entity not in ceilings_of:
            continue
        allowed = ceilings_of[entity]
        advisors = (ctx.volume_ceilings(entity) if detail["entity_kind"] == "volume"
                    else ctx.instance_ceilings(entity)) or {}
        for m in detail["evidence"]["measures"]:
            if m["limit"] is not None and m["unit"] in ("IOPS", "MiB/s"):
                assert any(math.isclose(m["limit"], c, rel_tol=1e-6) or math.isclose(m["limit"], 0.9 * c, rel_tol=1e-6)
                           for c in allowed), (detail["rule"], m, allowed)
            if m["ceiling"] is not None:
                ceiling = Ceiling.model_validate(m["ceiling"])
                assert ceiling.value == m["limit"], (detail["rule"], m)
                assert ceiling in [c for cs in advisors.values() for c in cs], (detail["rule"], ceiling, advisors)
                assert any(math.isclose(ceiling.value, v, rel_tol=1e-6) and ceiling.kind == k
                           for v, k in drawn_of[entity]), (detail["rule"], ceiling, drawn_of[entity])
                named += 1

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
        # the row's ceiling is the advisor's sustained Ceiling itself (value, kind, source), not a number of its own
        advisors = ctx.volume_ceilings(volume)
        assert advisors is not None
        in_force = Ceiling.model_validate(before[0]["in_force"])
        assert in_force == sustained_ceiling(advisors["iops"]), (volume, in_force)
        assert (in_force.value, in_force.kind) in drawn_of[volume], (volume, in_force)

    # the alert rules: 90 % of the data volumes' sustained IOPS ceiling
    rules = owner.get(f"/api/v1/clusters/{cid}/alert-rules")
    assert rules.status_code == 200, rules.text
    thresholds = {float(x) for x in re.findall(r">= 0\.9 \* ([0-9.]+)$", "\n".join(
        r["expr"] for g in yaml.safe_load(rules.text)["groups"] for r in g["rules"]
        if r["alert"] == "HeadroomDataVolumeIopsAtCeiling"), flags=re.M)}
    data_volumes = {n["node"]["data_volume"]["volume_id"] for n in overview.json()["nodes"] if n["node"]["data_volume"]}
    assert thresholds <= {sustained_of[v] for v in data_volumes if v in sustained_of} | {0.0} or not thresholds

    # the weekly email: its limits are the entities' ceilings, its chart's peak share the glance's peak use
    # (a cut held for want of history changes nothing and prints no limit: only findings with changes must show one)
    assert _check_email(seeded, ceilings_of, peaks_of, details) or not any(
        d["entity_kind"] in ("volume", "instance") and d.get("changes") for d in details)

    if seeded["scenario"] == "demo.yaml":
        assert named, "no finding named the ceiling it compares to"
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


# A bucket while it drains (examples/scenarios/gp2-burst-depletion.yaml: the gp2 volumes' BurstBalance falls from
# ~90 % at 11:00 to 0 by 15:00): the finding's "empties in" and the glance's are one number, not only when the
# bucket is already empty.
@pytest.mark.parametrize(("scenario", "end"), [
    ("gp2-burst-depletion.yaml", dt.datetime(2026, 11, 2, 13, 0, tzinfo=dt.UTC)),
])
def test_the_glance_forecasts_a_draining_bucket_as_the_finding_does(
        scenario: str, end: dt.datetime, client: Any, db: Any, clock: Any) -> None:
    owner = sign_up(client, org=f"Draining {scenario}")
    cluster = demo.seed_demo_cluster(db, uuid.UUID(owner.org_id), scenario=load_scenario(
        REPO / "examples" / "scenarios" / scenario))
    start = end - dt.timedelta(hours=HOURS)
    demo.ingest_window(db, cluster, load_scenario(REPO / "examples" / "scenarios" / scenario), start, end)
    findings_service.advise_cluster(db, cluster, now=end, window=end - start)
    db.commit()
    clock.now = end
    overview = owner.get(f"/api/v1/clusters/{cluster.id}/metrics/overview",
                         params={"start": start.isoformat(), "end": end.isoformat()}).json()
    shown = {(b["entity_id"], metric_label("ebs.burst_balance" if b["id"].endswith("_burst_balance")
                                           else b["id"].replace("ec2_", "ec2.", 1))): b
             for n in overview["nodes"] for b in n["burst"]}
    draining = 0
    for f in owner.get(f"/api/v1/clusters/{cluster.id}/findings", params={"limit": 200}).json()["items"]:
        detail = owner.get(f"/api/v1/findings/{f['id']}").json()
        for fc in detail["evidence"]["forecasts"]:
            if fc["kind"] != "burst_empty" or not fc["within_seconds"]:
                continue
            glance = shown[(detail["entity_id"], fc["label"])]
            assert glance["seconds_to_empty"] == pytest.approx(fc["within_seconds"], rel=1e-9), (detail["title"], fc)
            assert glance["balance_percent"] == pytest.approx(fc["balance_pct"])
            draining += 1
    assert draining, "no draining bucket with a forecast in the window"


def test_every_surface_reads_the_burst_forecasts_the_fleet_job_stored(client: Any, db: Any, clock: Any) -> None:
    """The fleet.score job stores the burst forecasts of the last advice round once; five minutes later (the
    bucket still draining, so a forecast of that minute would say otherwise) the glance, the Metrics tab's burst
    panel, the findings and the weekly email all show the stored number, and another org sees none of it."""
    from headroom.clusters.models import Cluster
    from headroom.fleet import service as fleet_service
    from headroom.metrics.models import StoredBurstForecasts

    scenario = load_scenario(REPO / "examples" / "scenarios" / "gp2-burst-depletion.yaml")
    advised = dt.datetime(2026, 11, 2, 13, 0, tzinfo=dt.UTC)
    owner = sign_up(client, org="Stored burst")
    org_id = uuid.UUID(owner.org_id)
    cluster = demo.seed_demo_cluster(db, org_id, scenario=scenario)
    demo.ingest_window(db, cluster, scenario, advised - dt.timedelta(hours=HOURS), advised + dt.timedelta(minutes=5))
    findings_service.advise_cluster(db, cluster, now=advised, window=dt.timedelta(hours=HOURS))
    now = advised + dt.timedelta(minutes=5)
    fleet_service.score_cluster(db, db.get(Cluster, cluster.id), now)
    db.commit()
    clock.now = now
    stored = db.get(StoredBurstForecasts, cluster.id)
    assert stored is not None and stored.at == advised and stored.org_id == org_id
    kept = {(b["entity_id"], b["id"]): b["forecast"] for bs in stored.forecasts.values() for b in bs}

    # the glance (its default window ends now) and the Metrics tab's burst panel of each node
    overview = owner.get(f"/api/v1/clusters/{cluster.id}/metrics/overview").json()
    glance = {(b["entity_id"], b["id"]): b for n in overview["nodes"] for b in n["burst"]}
    assert glance.keys() == kept.keys()
    draining = [k for k, fc in kept.items() if fc["seconds_to_empty"]]
    assert draining, "no draining bucket stored"
    for node in overview["nodes"]:
        metrics = owner.get(f"/api/v1/clusters/{cluster.id}/metrics",
                            params={"node_id": node["node"]["id"], "panel": ["burst_balance"]}).json()
        for panel in metrics["panels"]:
            for fc in panel["forecasts"]:
                assert fc["now"] == advised.isoformat().replace("+00:00", "Z")
                assert fc["seconds_to_empty"] == glance[(fc["entity_id"], fc["id"])]["seconds_to_empty"]
                # the path drawn is this node's stored one (each node's paths are read on their own)
                path = stored.paths[node["node"]["id"]][fc["id"]]
                assert fc["path"]["percent"] == path["percent"] and len(fc["path"]["t"]) == len(path["timestamps"]) > 1
    for key, fc in kept.items():
        assert glance[key]["seconds_to_empty"] == fc["seconds_to_empty"], key
        assert glance[key]["balance_percent"] == fc["balance_percent"], key

    # the findings and the weekly email: the same seconds to empty, bucket by bucket
    by_label = {(e, metric_label("ebs.burst_balance" if i.endswith("_burst_balance") else i.replace("ec2_", "ec2.", 1))):
                fc for (e, i), fc in kept.items()}
    compared = 0
    for f in owner.get(f"/api/v1/clusters/{cluster.id}/findings", params={"limit": 200}).json()["items"]:
        detail = owner.get(f"/api/v1/findings/{f['id']}").json()
        for fc in detail["evidence"]["forecasts"]:
            if fc["kind"] == "burst_empty" and fc["within_seconds"]:
                assert fc["within_seconds"] == by_label[(detail["entity_id"], fc["label"])]["seconds_to_empty"]
                compared += 1
    assert compared, "no finding forecasts a draining bucket"
    emailed = [f for c in digest_service.gather(db, org_id, now=now, public_url="https://headroom.example").clusters
               for item in c.open_findings for f in item.forecast if f.kind == "burst_empty" and f.within_seconds]
    assert emailed and {f.within_seconds for f in emailed} <= {fc["seconds_to_empty"] for fc in kept.values()}

    # tenancy: another org asks for the cluster and gets nothing of it
    other = sign_up(client, org="Stored burst, another org")
    assert other.get(f"/api/v1/clusters/{cluster.id}/metrics/overview").status_code == 404


@pytest.mark.parametrize(("scenario", "advised"), [
    ("gp2-burst-depletion.yaml", dt.datetime(2026, 11, 2, 13, 0, tzinfo=dt.UTC)),
    ("demo.yaml", END),
])
def test_the_advice_run_stores_the_burst_forecasts_of_its_window(scenario: str, advised: dt.datetime, client: Any,
                                                                   db: Any) -> None:
    """A scheduled advice round (24 hours) stores its burst forecasts from the advisor's own Context: bucket for
    bucket and point for point of each path what a Context built from the store for the same window gives (what
    the fleet.score job used to compute), and the fleet.score job then computes none."""
    from headroom.clusters.models import Cluster
    from headroom.metrics import service as metrics_service
    from headroom.metrics.models import StoredBurstForecasts

    owner = sign_up(client, org=f"Burst stored by the advice, {scenario}")
    loaded = load_scenario(REPO / "examples" / "scenarios" / scenario)
    cluster = demo.seed_demo_cluster(db, uuid.UUID(owner.org_id), scenario=loaded)
    demo.ingest_window(db, cluster, loaded, advised - dt.timedelta(hours=25), advised)
    findings_service.advise_cluster(db, cluster, now=advised)
    db.flush()
    row = db.get(StoredBurstForecasts, cluster.id)
    assert row is not None and row.at == advised
    by_advice = (row.forecasts, row.paths)
    drains = any(f["forecast"]["seconds_to_empty"] for fs in row.forecasts.values() for f in fs)
    assert drains == (scenario == "gp2-burst-depletion.yaml")  # the demo's buckets are full at 18:00
    db.delete(row)
    db.flush()
    cluster = db.get(Cluster, cluster.id)
    assert metrics_service.store_burst_forecasts(db, cluster) == sum(len(fs) for fs in by_advice[0].values()) > 0
    db.flush()
    db.expire_all()
    row = db.get(StoredBurstForecasts, cluster.id)
    assert (row.forecasts, row.paths) == by_advice
    assert metrics_service.ensure_burst_forecasts(db, db.get(Cluster, cluster.id)) == 0  # stored: not again


def test_the_overviews_7_day_peaks_are_the_ones_the_fleet_job_stored(client: Any, db: Any, clock: Any) -> None:
    """The fleet.score job stores the overview's peaks over the 7 days ending at its run; the overview's 7-day range
    asked for up to 45 minutes later shows those stored numbers and says so (its window is the stored one), and
    they are the numbers the overview computes for that window itself; a window of another length, or one too long
    after the run, is computed for the request."""
    from headroom.clusters.models import Cluster
    from headroom.fleet import service as fleet_service
    from headroom.metrics.models import StoredOverviewPeaks

    scenario = load_scenario(REPO / "examples" / "scenarios" / "demo.yaml")
    owner = sign_up(client, org="Stored week peaks")
    cluster = demo.seed_demo_cluster(db, uuid.UUID(owner.org_id), scenario=scenario)
    demo.ingest_window(db, cluster, scenario, END - dt.timedelta(hours=HOURS), END)
    findings_service.advise_cluster(db, cluster, now=END, window=dt.timedelta(hours=HOURS))
    scored = END + dt.timedelta(minutes=5)
    fleet_service.score_cluster(db, db.get(Cluster, cluster.id), scored)
    db.commit()

    def week(end: dt.datetime) -> dict[str, Any]:
        clock.now = end
        answer = owner.get(f"/api/v1/clusters/{cluster.id}/metrics/overview",
                           params={"start": (end - dt.timedelta(days=7)).isoformat(), "end": end.isoformat()})
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    def peaks(overview: dict[str, Any]) -> dict[tuple[str, str], tuple[Any, ...]]:
        return {(n["node"]["id"], c["metric"]): (c["peak_percent"], c["peak_value"], c["peak_at"], c["ceiling"],
                                                 c["ceiling_now"]) for n in overview["nodes"] for c in n["utilisation"]}

    shown = week(scored + dt.timedelta(minutes=10))
    assert shown["peaks_stored"] is True
    assert shown["end"] == scored.isoformat().replace("+00:00", "Z")
    stored = peaks(shown)
    assert any(p[0] is not None for p in stored.values()), stored

    # the same window computed for the request (nothing stored) gives the same numbers, cell by cell
    row = db.get(StoredOverviewPeaks, cluster.id)
    db.delete(row)
    db.commit()
    computed = week(scored)
    assert computed["peaks_stored"] is False and peaks(computed) == stored
    fleet_service.score_cluster(db, db.get(Cluster, cluster.id), scored)
    db.commit()
    assert week(scored)["peaks_stored"] is True

    # another window length, or a window ending too long after the job's, is computed for the request
    clock.now = scored
    six = owner.get(f"/api/v1/clusters/{cluster.id}/metrics/overview").json()
    assert six["peaks_stored"] is False
    assert week(scored + dt.timedelta(hours=1))["peaks_stored"] is False


def test_a_window_of_the_past_computes_its_own_burst_forecasts(client: Any, db: Any, clock: Any) -> None:
    """A window that ends long after the last advice round is not the stored round's: its forecasts are its own."""
    from headroom.clusters.models import Cluster
    from headroom.fleet import service as fleet_service

    scenario = load_scenario(REPO / "examples" / "scenarios" / "gp2-burst-depletion.yaml")
    advised = dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)
    owner = sign_up(client, org="Stored burst, later window")
    cluster = demo.seed_demo_cluster(db, uuid.UUID(owner.org_id), scenario=scenario)
    demo.ingest_window(db, cluster, scenario, advised - dt.timedelta(hours=HOURS), advised + dt.timedelta(hours=1))
    findings_service.advise_cluster(db, cluster, now=advised, window=dt.timedelta(hours=HOURS))
    fleet_service.score_cluster(db, db.get(Cluster, cluster.id), advised)
    db.commit()
    clock.now = advised + dt.timedelta(hours=1)
    at_advice = owner.get(f"/api/v1/clusters/{cluster.id}/metrics/overview",
                          params={"end": (advised + dt.timedelta(minutes=10)).isoformat()}).json()
    later = owner.get(f"/api/v1/clusters/{cluster.id}/metrics/overview").json()
    soon = {b["entity_id"]: b["balance_percent"] for n in at_advice["nodes"] for b in n["burst"]}
    then = {b["entity_id"]: b["balance_percent"] for n in later["nodes"] for b in n["burst"]}
    assert soon and soon.keys() == then.keys()
    assert any(then[k] < soon[k] for k in soon), (soon, then)  # an hour later the buckets hold less


@pytest.mark.parametrize("seeded", ["demo.yaml"], indirect=True)
def test_the_apply_plans_predicted_effect_is_the_findings_and_the_what_ifs(seeded: dict[str, Any]) -> None:
    """The apply plan (GET /findings/{id}/apply-plan) predicts what the finding predicts, and the what-if of the
    same changes says the same: the ceiling before and after (to the displayed precision) and the monthly cost."""
    owner, cid = seeded["owner"], seeded["cluster_id"]
    listed = owner.get(f"/api/v1/clusters/{cid}/findings", params={"limit": 200})
    assert listed.status_code == 200, listed.text
    ceilings_checked = costs_checked = headroom_checked = 0
    for item in listed.json()["items"]:
        detail = owner.get(f"/api/v1/findings/{item['id']}").json()
        preview = owner.get(f"/api/v1/findings/{item['id']}/apply-plan")
        assert preview.status_code == 200, preview.text
        impact = detail["impact"]
        assert preview.json()["predicted"] == impact, detail["rule"]  # the finding's own numbers, not recomputed
        if not detail["changes"] or impact is None:
            continue
        whatif = owner.post(f"/api/v1/clusters/{cid}/what-if", json={"changes": detail["changes"]})
        assert whatif.status_code == 200, whatif.text
        answer = whatif.json()
        if impact["monthly_cost_delta_usd"] is not None:
            assert answer["cost"]["delta_usd"] == pytest.approx(impact["monthly_cost_delta_usd"], abs=0.005), (
                detail["rule"], answer["cost"], impact)
            costs_checked += impact["monthly_cost_delta_usd"] != 0
        if impact["unit"] in ("IOPS", "MiB/s") and "ceiling" in (impact["metric"] or ""):
            # the entity's own row, and the ceiling the node gets after: the smaller of its volume's and its
            # instance's in force (the instance's EBS limit can bind first)
            dimension = "iops" if impact["unit"] == "IOPS" else "throughput"
            rows = [r for r in answer["ceilings"] if r["dimension"] == dimension]
            [own] = [r for r in rows if r["entity_id"] == detail["entity_id"]]
            gets_after = min(r["ceiling_after"] for r in rows if r["entity_id"] in (
                detail["entity_id"], seeded["ctx"].volume(detail["entity_id"]).instance_id))
            shown = (format_quantity(impact["before"], impact["unit"]), format_quantity(impact["after"], impact["unit"]))
            assert shown == (format_quantity(own["ceiling"], own["unit"]), format_quantity(gets_after, own["unit"])), (
                detail["rule"], impact, rows)
            ceilings_checked += 1
        if impact["unit"] in ("IOPS", "MiB/s") and impact["headroom_after_pct"] is not None:
            # the peak use the finding (and so its apply plan) predicts is the what-if row's of the same entity, the
            # same figure before and after, written with the same digits (the one formatter)
            dimension = "iops" if impact["unit"] == "IOPS" else "throughput"
            [own] = [r for r in answer["ceilings"] if r["dimension"] == dimension and r["entity_id"] == detail["entity_id"]]
            predicted = (impact["headroom_before_pct"], impact["headroom_after_pct"])
            assert predicted == (own["headroom_pct"], own["headroom_after_pct"]), (detail["rule"], impact, own)
            assert [format_quantity(100 - h, "%") for h in predicted] == [
                format_quantity(100 - own["headroom_pct"], "%"), format_quantity(100 - own["headroom_after_pct"], "%")]
            headroom_checked += 1
    # the demo has volume fixes that move a ceiling and cost money (gp2 -> gp3, provisioned throughput)
    assert ceilings_checked >= 2 and costs_checked >= 2, (ceilings_checked, costs_checked)
    assert headroom_checked >= 1, headroom_checked  # the data volume whose instance binds after the raise


# Windows in which gp2 buckets drain (the bursting minutes' p95 and the window's p99 differ there: -42.3 % and
# -45.2 % of the 1,500 IOPS baseline for one volume of gp2-burst-depletion.yaml at 14:00) and in which they sit empty
# (the volume serves its baseline: 0 % either way).
BURST_WINDOWS = [("gp2-burst-depletion.yaml", dt.datetime(2026, 11, 2, 14, 0, tzinfo=dt.UTC)),
                 ("demo.yaml", dt.datetime(2026, 11, 2, 10, 0, tzinfo=dt.UTC)), ("demo.yaml", END)]


@pytest.mark.parametrize("seeded", BURST_WINDOWS, indirect=True, ids=lambda w: f"{w[0]}@{w[1]:%H:%M}")
def test_a_burst_finding_and_the_what_if_of_its_fix_say_the_same_headroom(seeded: dict[str, Any]) -> None:
    """The gp2 burst finding's headroom before and after its fix is the what-if's row of the same volume, to 0.01
    points and as written (the one figure: the window's p99 against the smallest limit, docs/thresholds/burst.md),
    and it is the advisor's own Context.volume_headroom_pct of that volume."""
    owner, cid, ctx = seeded["owner"], seeded["cluster_id"], seeded["ctx"]
    listed = owner.get(f"/api/v1/clusters/{cid}/findings", params={"limit": 200}).json()["items"]
    burst = [owner.get(f"/api/v1/findings/{f['id']}").json() for f in listed if f["rule"] == "gp2-burst-depletion"]
    assert burst, seeded["scenario"]
    for detail in burst:
        impact, volume = detail["impact"], detail["entity_id"]
        whatif = owner.post(f"/api/v1/clusters/{cid}/what-if", json={"changes": detail["changes"]})
        assert whatif.status_code == 200, whatif.text
        [row] = [r for r in whatif.json()["ceilings"] if r["entity_id"] == volume and r["dimension"] == "iops"]
        finding = (impact["headroom_before_pct"], impact["headroom_after_pct"])
        assert finding == (row["headroom_pct"], row["headroom_after_pct"]), (volume, impact, row)
        assert [format_quantity(h, "%") for h in finding] == [
            format_quantity(row["headroom_pct"], "%"), format_quantity(row["headroom_after_pct"], "%")]
        assert finding[0] == ctx.volume_headroom_pct(volume, "iops", ctx.volume_limits(volume).baseline_iops)
        # the p99 the row shows is the one the figure is of: 100 x (1 - p99 / the smaller limit)
        smaller = min(v for v in (row["ceiling"], row["instance_limit"]) if v is not None)
        assert finding[0] == pytest.approx(100 * (1 - row["p99"] / smaller), abs=0.01)
