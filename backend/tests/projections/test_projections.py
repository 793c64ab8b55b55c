"""Projections through the real pipeline: the demo cluster's data written into the store as the collectors write
it (1-minute EBS, 5-minute EC2, Prometheus store sizes), rolled up hourly, fitted by the projections service and
served by the API (docs/projections.md). The data (`world`) is built once per worker for the directory
(conftest.py)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from headroom.platform.jobs.context import JobContext
from headroom.platform.settings import Settings
from headroom.projections import service as projections
from headroom.projections.models import Projection
from headroom.sources.demo import service as demo
from helpers import sign_up, units_of_work
from projections_support import END, HOURS
from sqlalchemy import func, select


def _job_context(sessions: Any) -> JobContext:
    """The context the job hands the service: units of work inside the test's transaction."""

    def queue(name: str, **params: Any) -> str:
        raise AssertionError(f"projections queue nothing ({name})")

    return JobContext(settings=Settings(), database_url="unused", units=units_of_work(sessions), queue=queue)


def test_every_ceiling_is_projected_once_a_day_and_served_nearest_first(world: dict[str, Any], db: Any,
                                                                         client: Any, sessions: Any) -> None:
    cluster = world["cluster"]
    now = END + dt.timedelta(minutes=5)
    first = projections.project_cluster(db, cluster, now=now)
    db.commit()
    assert first["fitted"] > 0, first
    rows = list(db.scalars(select(Projection).where(Projection.cluster_id == cluster.id)))
    kinds = {(r.entity_kind, r.metric) for r in rows}
    # every kind of ceiling: each volume's IOPS and MiB/s, each instance's EBS IOPS and MiB/s, each store's disk
    assert {("volume", "iops"), ("volume", "mibps"), ("instance", "iops"), ("instance", "mibps"),
            ("node", "used_gib")} <= kinds
    for r in rows:
        # the four days that hold data, not the four weeks of the window (a late start is not extended backwards)
        assert HOURS - 2 <= r.history_hours <= HOURS, (r.entity_id, r.metric, r.history_hours)
        assert r.method == "ets-daily" or r.method in ("holt", "constant"), r.method
        assert "(http" in r.ceiling_source  # a public page says where the ceiling comes from
        # the ceiling itself is stored: its number and source are the row's, its kind says what kind of limit
        assert r.target is not None and (r.target.value, r.target.source) == (r.ceiling, r.ceiling_source)
        assert r.target.kind in (("configured",) if r.entity_kind == "node" else ("sustained", "provisioned"))
        assert len(r.band["t"]) == len(r.band["point"]) == len(r.band["low"]) == len(r.band["high"]) > 0
    # the hot node's gp3 volume runs at its IOPS ceiling in the demo's afternoons: reached already (0 days)
    at_ceiling = [r for r in rows if r.entity_kind == "volume" and r.days == 0]
    assert at_ceiling, sorted((r.entity_id, r.metric, r.days) for r in rows)

    # once a day: a second run within the day fits nothing, and the scheduled pass (every 10 minutes) leaves the
    # cluster alone until its fit is a day old; then it replaces the rows, never adds any
    again = projections.project_cluster(db, cluster, now=now + dt.timedelta(hours=1))
    assert again.get("skipped") == "fitted within the last day"
    job = projections.project_clusters(_job_context(sessions), now + dt.timedelta(hours=2))
    assert str(cluster.id) not in {c["cluster_id"] for c in job["clusters"]} and job["failed"] == 0
    later = projections.project_clusters(_job_context(sessions), now + dt.timedelta(hours=22))
    assert any(c["cluster_id"] == str(cluster.id) and c.get("fitted") == first["fitted"] for c in later["clusters"])
    count = db.scalar(select(func.count()).select_from(Projection).where(Projection.cluster_id == cluster.id))
    assert count == first["fitted"]

    url = f"/api/v1/clusters/{cluster.id}/projections"
    listed = world["viewer"].get(url)
    assert listed.status_code == 200, listed.text
    body = listed.json()
    assert body["total"] == count and body["fitted_at"] is not None
    days = [p["days"] for p in body["items"]]
    known = [d for d in days if d is not None]
    assert known == sorted(known) and days[: len(known)] == known  # nearest first, beyond the horizon last
    assert body["items"][0]["days"] == 0
    assert all(len(p["band"]["t"]) == len(p["band"]["point"]) > 0 for p in body["items"])
    # the overview's list of days asks without the forecast paths: the same items, a fraction of the bytes
    days_only = world["viewer"].get(url, params={"bands": "false"})
    assert days_only.status_code == 200, days_only.text
    assert [p["band"] for p in days_only.json()["items"]] == [None] * count
    assert [{**p, "band": None} for p in body["items"]] == days_only.json()["items"]
    assert len(days_only.content) * 10 < len(listed.content)

    # another organisation's cluster is a 404, as a missing one
    stranger = sign_up(client, org="Someone Else")
    assert stranger.get(url).status_code == 404


def test_a_cluster_without_data_is_skipped_not_projected_flat(db: Any) -> None:
    from headroom.accounts.models import Organization
    from headroom.platform.security import new_external_id

    org = Organization(name="empty", slug=f"empty-{uuid.uuid4().hex[:8]}", aws_external_id=new_external_id())
    db.add(org)
    db.flush()
    cluster = demo.seed_demo_cluster(db, org.id)
    summary = projections.project_cluster(db, cluster, now=END)
    assert summary["skipped"] == "no data in the history"
    assert db.scalar(select(func.count()).select_from(Projection).where(Projection.cluster_id == cluster.id)) == 0


def test_metrics_panels_draw_the_projection_and_the_advisor_reads_it(world: dict[str, Any], db: Any) -> None:
    from headroom.findings import service as findings
    from headroom.timeseries.snapshots import build_snapshot

    cluster = world["cluster"]
    now = END + dt.timedelta(minutes=5)
    projections.project_cluster(db, cluster, now=now)
    db.commit()
    viewer = world["viewer"]
    window = {"start": (END - dt.timedelta(hours=24)).isoformat(), "end": END.isoformat()}
    plain = viewer.get(f"/api/v1/clusters/{cluster.id}/metrics", params=window)
    assert plain.status_code == 200, plain.text
    assert all(p["projection"] is None for p in plain.json()["panels"])  # opt-in: months of path
    drawn = viewer.get(f"/api/v1/clusters/{cluster.id}/metrics", params={**window, "projections": "true"})
    assert drawn.status_code == 200, drawn.text
    panels = {p["id"]: p for p in drawn.json()["panels"]}
    node = drawn.json()["node"]
    rows = {(r.entity_kind, r.entity_id, r.metric): r for r in db.scalars(
        select(Projection).where(Projection.cluster_id == cluster.id))}
    for pid, key in (("data_iops", ("volume", node["data_volume"]["volume_id"], "iops")),
                     ("instance_throughput", ("instance", node["instance_id"], "mibps")),
                     ("disk_space", ("node", node["store_address"], "used_gib"))):
        p = panels[pid]["projection"]
        assert p is not None, pid
        row = rows[key]
        assert p["ceiling"] == row.ceiling and p["days"] == row.days and p["method"] == row.method
        # the projection runs toward one of the ceilings the panel draws: same value, same kind
        assert p["target"]["value"] == p["ceiling"] and p["target"]["source"] == p["ceiling_source"]
        assert any(c["value"] == pytest.approx(p["target"]["value"], abs=0.1) and c["kind"] == p["target"]["kind"]
                   for c in panels[pid]["ceilings"]), (pid, p["target"], panels[pid]["ceilings"])
        assert len(p["t"]) == len(p["point"]) == len(p["low"]) == len(p["high"]) <= len(row.band["t"])
        assert p["t"][0] == int(dt.datetime.fromisoformat(row.band["t"][0]).timestamp())
        if row.days is not None:  # cut a week past the latest crossing
            last = row.days_high if row.days_high is not None else row.days
            limit = row.history_end + dt.timedelta(days=last + 7)
            assert dt.datetime.fromtimestamp(p["t"][-1], dt.UTC) <= limit
    # the disk panel: the space PD sees used, the capacity TiKV reports, and PD's two lines on it
    disk = panels["disk_space"]
    ids = {s["id"] for s in disk["series"]}
    assert {"pd_used", "capacity", "tikv_used"} <= ids
    capacity = [v for v in next(s for s in disk["series"] if s["id"] == "capacity")["values"] if v is not None][-1]
    lines = {c["id"]: c["value"] for c in disk["ceilings"]}
    assert lines["pd_low_space"] == pytest.approx(0.8 * capacity, abs=0.1)
    assert lines["pd_high_space"] == pytest.approx(0.7 * capacity, abs=0.1)
    assert all("pd-configuration-file" in c["source"] for c in disk["ceilings"])

    # the advisor's snapshot carries the stored projections of the entities it holds
    snap = build_snapshot(db, cluster.org_id, cluster.id, start=END - dt.timedelta(hours=24), end=END)
    with_p = projections.with_projections(db, cluster, snap)
    assert {(p.entity.kind, p.entity.id, p.metric) for p in with_p.projections} == set(rows)
    summary = findings.advise_cluster(db, cluster, now=END)
    assert summary.skipped is None


def test_the_weekly_email_lists_the_nearest_ceilings_in_days(world: dict[str, Any], db: Any) -> None:
    from headroom.digest import service as digest

    cluster = world["cluster"]
    now = END + dt.timedelta(minutes=5)
    projections.project_cluster(db, cluster, now=now)
    db.commit()
    lines = projections.nearest_ceilings(db, cluster.org_id, cluster.id)
    rows = sorted((r for r in db.scalars(select(Projection).where(Projection.cluster_id == cluster.id))
                   if r.days is not None), key=lambda r: (r.days, r.entity_kind, r.entity_id, r.metric))
    ahead = [r for r in rows if r.days]
    reached = [r for r in rows if not r.days]
    assert ahead or reached
    # the crossings ahead, nearest first, in days; then the ones already reached, in one line at the end
    assert len(lines) == min(3, len(ahead)) + (1 if reached else 0)
    for line, row in zip(lines, ahead[:3], strict=False):
        assert row.entity_id in line and f"in {max(1, round(row.days))} day" in line
        assert "minute" not in line and "already" not in line.lower()
    if reached:
        assert lines[-1].startswith("Already at the ceiling (hourly average): ")
        assert all(r.entity_id in lines[-1] for r in reached[:3])
    mail = digest.render(db, cluster.org_id, now=now, public_url="http://127.0.0.1:8000")
    assert "Nearest ceilings (growth projections):" in mail.text and lines[0] in mail.text
    assert "Nearest ceilings (growth projections):" in mail.html
