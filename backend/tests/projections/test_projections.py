"""Projections through the real pipeline: the demo cluster's data written into the store as the collectors write
it (1-minute EBS, 5-minute EC2, Prometheus store sizes), rolled up hourly, fitted by the projections service and
served by the API (issue 14)."""

from __future__ import annotations

import contextlib
import datetime as dt
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from headroom.domain.snapshot.scenario import load_scenario
from headroom.platform.jobs.context import JobContext
from headroom.platform.settings import Settings
from headroom.projections import service as projections
from headroom.projections.models import Projection
from headroom.sources.demo import service as demo
from headroom.timeseries import repository as ts
from helpers import join_with_role, sign_up
from sqlalchemy import func, select

# The demo scenario's afternoon (as the advice tests use): its hot node pins its gp3 volume's IOPS.
END = dt.datetime(2026, 11, 2, 18, 0, tzinfo=dt.UTC)
HOURS = 76  # three days and a bit: three daily cycles (ets-daily), inside a four-week history window


@pytest.fixture()
def world(client: Any, make_client: Any, db: Any) -> dict[str, Any]:
    owner = sign_up(client, org="Projections Org")
    viewer = join_with_role(owner, make_client(), "viewer")
    cluster = demo.seed_demo_cluster(db, uuid.UUID(owner.org_id))
    scenario = load_scenario(demo.default_scenario_path())
    start = END - dt.timedelta(hours=HOURS)
    demo.ingest_window(db, cluster, scenario, start, END)
    ts.refresh_rollups(db, start, END)
    db.commit()
    return {"owner": owner, "viewer": viewer, "cluster": cluster, "scenario": scenario}


def _job_context(sessions: Any) -> JobContext:
    """The context the job hands the service: units of work inside the test's transaction."""

    @contextlib.contextmanager
    def unit() -> Iterator[Any]:
        session = sessions()
        try:
            yield session
            session.commit()
        finally:
            session.close()

    def queue(name: str, **params: Any) -> str:
        raise AssertionError(f"projections queue nothing ({name})")

    return JobContext(settings=Settings(), database_url="unused", units=unit, queue=queue)


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
