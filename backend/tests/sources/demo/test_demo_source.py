"""The demo organisation's AWS source: what a healthy connection looks like (permission checks, sweeps with
their CloudWatch cost, the history import), honestly marked as a demo, and never reaching AWS."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from headroom.inventory.models import Instance
from headroom.sources.aws import ingest as aws_ingest
from headroom.sources.aws.metric_plan import MAX_DATAPOINTS, MAX_QUERIES
from headroom.sources.demo import service as demo
from headroom.sources.models import AwsBackfill, CollectionSweep
from helpers import sign_up
from sqlalchemy import func, select

NOW = dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)


def _refuse_aws(*_a: Any, **_k: Any) -> Any:
    raise AssertionError("the demo source asked for AWS clients")


def test_the_demo_source_shows_a_healthy_connection_without_calling_aws(client: Any, db: Any, app_ctx: Any,
                                                                        clock: Any) -> None:
    owner = sign_up(client)
    org_id = uuid.UUID(owner.org_id)
    cluster = demo.seed_demo_cluster(db, org_id)
    source = demo.seed_demo_source(db, org_id)
    assert demo.seed_demo_source(db, org_id).id == source.id  # once per org
    db.commit()

    listed = owner.get("/api/v1/sources/aws").json()
    assert [(c["name"], c["is_demo"], c["role_arn"]) for c in listed] == [
        ("Demo AWS account", True, demo.DEMO_ROLE_ARN)]

    # The first demo ingest (7 days) is the source's history import; the next minute an incremental sweep.
    demo.ingest_demo(db, cluster, now=NOW)
    demo.ingest_demo(db, cluster, now=NOW + dt.timedelta(minutes=1))
    db.commit()
    instances = db.scalars(select(Instance).where(Instance.org_id == org_id)).all()
    assert instances and all(i.aws_connection_id == source.id for i in instances)
    sweeps = owner.get(f"/api/v1/sources/aws/{source.id}/sweeps").json()
    assert [s["kind"] for s in sweeps] == ["incremental", "backfill"]
    queries, _ = aws_ingest.queries_for(db, source, source.regions[0])
    for sweep in sweeps:
        assert sweep["series"] == len(queries) > 0 and sweep["error"] is None
        # The plan the collector would have made: at the GetMetricData lower bound, never under it.
        points = sweep["datapoints"]
        bound = max(-(-sweep["series"] // MAX_QUERIES), -(-points // MAX_DATAPOINTS))
        assert sweep["lower_bound_calls"] == bound and sweep["api_calls"] == sweep["planned_calls"] >= bound
        assert sweep["metrics_requested"] >= sweep["series"] and sweep["points_written"] > 0
    backfill = owner.get(f"/api/v1/sources/aws/{source.id}/backfill").json()
    assert backfill["state"] == "done" and backfill["days"] == 7
    assert backfill["points_done"] == backfill["points_total"] == sweeps[1]["datapoints"]
    assert db.scalar(select(func.count()).select_from(AwsBackfill).where(AwsBackfill.source_id == source.id)) == 1
    health = owner.get(f"/api/v1/sources/aws/{source.id}").json()["health"]
    assert health["status"] == "ok" and health["last_success_at"] is not None

    # Its test passes without asking AWS for anything, and says so.
    app_ctx.aws_clients = _refuse_aws
    report = owner.post(f"/api/v1/sources/aws/{source.id}/test").json()
    assert report["ok"] is True and report["demo"] is True and report["import_started"] is False
    assert {c["message"] for c in report["checks"]} == {demo.aws_sources.DEMO_CHECK_MESSAGE}

    # Nothing can point it at a real account, nor import from AWS.
    edit = owner.patch(f"/api/v1/sources/aws/{source.id}", json={"role_arn": "arn:aws:iam::210987654321:role/x"})
    assert edit.status_code == 409 and edit.json()["error"]["code"] == "demo_source"
    again = owner.post(f"/api/v1/sources/aws/{source.id}/backfill", json={"days": 14})
    assert again.status_code == 409 and again.json()["error"]["code"] == "demo_source"
    assert db.scalar(select(func.count()).select_from(CollectionSweep)
                     .where(CollectionSweep.source_id == source.id)) == 2
