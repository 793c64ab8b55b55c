"""The fleet overview through the real API: the demo cluster's data as the collectors store it, advised and
projected by the real services, next to an empty cluster (`world`, built once per worker for the directory:
conftest.py); every figure checked against its own source."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from fleet_support import END
from headroom.domain.catalog import instance_limits, volume_limits
from headroom.findings.models import FindingRecord
from headroom.inventory.models import Instance, TikvNode, Volume
from headroom.metrics import service as metrics_service
from headroom.platform.principal import Principal
from headroom.projections.models import Projection
from helpers import sign_up
from sqlalchemy import select


def test_each_cluster_with_its_health_score_nearest_ceiling_spend_and_savings(world: dict[str, Any], db: Any,
                                                                                client: Any) -> None:
    cluster = world["cluster"]
    response = world["viewer"].get("/api/v1/fleet")
    assert response.status_code == 200, response.text
    body = response.json()
    items = {i["name"]: i for i in body["items"]}
    assert set(items) == {cluster.name, "empty-one"}
    demo_row, empty = items[cluster.name], items["empty-one"]

    # open findings by severity: the store's count (open and acknowledged)
    rows = list(db.scalars(select(FindingRecord).where(FindingRecord.cluster_id == cluster.id,
                                                       FindingRecord.status.in_(("open", "acknowledged")))))
    assert demo_row["open_by_severity"] == {s: sum(1 for r in rows if r.severity == s)
                                            for s in ("critical", "warning", "info")}
    assert sum(demo_row["open_by_severity"].values()) > 0
    # savings: the fixes that cost less, summed
    deltas = [r.impact.monthly_cost_delta_usd for r in rows if r.impact is not None]
    assert demo_row["savings_usd"] == pytest.approx(sum(-d for d in deltas if d is not None and d < 0), abs=0.01)

    # the score: 100 - the tightest ceiling's peak use over the last day, as the metrics overview reads it
    principal = Principal(user_id=None, org_id=cluster.org_id, role="viewer", via="test")
    ov = metrics_service.cluster_overview(db, principal, cluster.id, start=END - dt.timedelta(hours=24), end=END,
                                          now=END)
    peak = max(c.peak.percent for n in ov.nodes for c in n.cells if c.peak is not None)
    assert demo_row["tightest"]["peak_percent"] == pytest.approx(peak, abs=0.05)
    assert demo_row["headroom_score"] == max(0, round(100 - peak))
    assert "100 - the highest peak use" in body["score_definition"]

    # the nearest projected ceiling: the smallest days of the cluster's projections
    stored = [p for p in db.scalars(select(Projection).where(Projection.cluster_id == cluster.id)) if p.days is not None]
    assert demo_row["nearest_ceiling"]["days"] == min(p.days for p in stored)

    # spend: each volume's and instance's on-demand price from the catalog
    volumes = list(db.scalars(select(Volume).where(Volume.cluster_id == cluster.id)))
    nodes = list(db.scalars(select(TikvNode).where(TikvNode.cluster_id == cluster.id)))
    instances = list(db.scalars(select(Instance).where(Instance.id.in_([n.instance_ref_id for n in nodes]))))
    expected = sum(volume_limits(v.volume_type, v.size_gib, v.iops, v.throughput_mibps).monthly_cost_usd
                   for v in volumes) + sum(instance_limits(i.instance_type).monthly_price_usd or 0 for i in instances)
    assert demo_row["monthly_spend_usd"] == pytest.approx(expected, abs=0.05) and demo_row["unpriced"] == []
    assert body["total_spend_usd"] == pytest.approx(demo_row["monthly_spend_usd"] + empty["monthly_spend_usd"], abs=0.01)

    # a cluster without data: nothing to score, nothing projected, nothing spent
    assert empty["headroom_score"] is None and empty["tightest"] is None and empty["nearest_ceiling"] is None
    assert empty["monthly_spend_usd"] == 0 and sum(empty["open_by_severity"].values()) == 0

    # another organisation sees only its own clusters
    stranger = sign_up(client, org="Other Fleet")
    assert stranger.get("/api/v1/fleet").json()["items"] == []


def test_the_page_reads_the_stored_score_and_computes_a_missing_or_stale_one(world: dict[str, Any], db: Any,
                                                                              clock: Any) -> None:
    """The fleet.score job stores each cluster's score; the page shows the stored one (even once the series
    behind it are gone), and computes live a cluster without one, or with one older than SCORE_STALE."""
    from headroom.fleet import service as fleet_service
    from headroom.fleet.models import FleetScore
    from headroom.platform.jobs.context import JobContext
    from headroom.platform.settings import Settings
    from sqlalchemy import text

    cluster = world["cluster"]
    live = {i["name"]: i for i in world["viewer"].get("/api/v1/fleet").json()["items"]}[cluster.name]
    assert live["scored_at"] == END.isoformat().replace("+00:00", "Z")

    @contextmanager
    def unit() -> Iterator[Any]:
        yield db
        db.flush()

    queued: list[Any] = []
    ctx = JobContext(settings=Settings(), database_url="unused", units=unit,
                     queue=lambda name, **params: queued.append((name, params)) or "x")
    summary = fleet_service.score_clusters(ctx, END)  # every cluster of the database: this org's two at least
    assert summary["failed"] == 0 and summary["clusters"] >= 2
    assert not queued
    rows = {r.cluster_id: r for r in db.scalars(select(FleetScore).where(FleetScore.org_id == cluster.org_id))}
    assert rows[cluster.id].headroom_score == live["headroom_score"] and rows[cluster.id].window_end == END
    assert rows[uuid.UUID(world["empty"]["id"])].headroom_score is None
    # with Celery workers the scheduled round is one task per cluster
    fanned = fleet_service.score_clusters(
        JobContext(settings=Settings(REDIS_URL="redis://broker"), database_url="unused", units=unit,
                   queue=lambda name, **params: queued.append((name, params)) or "x"), END)
    assert fanned["queued"] == len(queued) >= 2 and {q[0] for q in queued} == {"fleet.score"}

    # the series are gone: the stored score is still what the page shows
    db.execute(text("DELETE FROM metric_points WHERE org_id = :o"), {"o": cluster.org_id})
    db.execute(text("DELETE FROM metric_rollups WHERE org_id = :o"), {"o": cluster.org_id})
    clock.now = END + dt.timedelta(minutes=10)
    kept = {i["name"]: i for i in world["viewer"].get("/api/v1/fleet").json()["items"]}[cluster.name]
    assert kept["headroom_score"] == live["headroom_score"] and kept["tightest"] == live["tightest"]
    assert kept["scored_at"] == live["scored_at"]
    # older than SCORE_STALE: computed live, from what the store holds now (nothing)
    clock.now = END + fleet_service.SCORE_STALE + dt.timedelta(minutes=1)
    stale = {i["name"]: i for i in world["viewer"].get("/api/v1/fleet").json()["items"]}[cluster.name]
    assert stale["headroom_score"] is None and stale["tightest"] is None
    assert stale["scored_at"] == clock.now.replace(second=0).isoformat().replace("+00:00", "Z")
