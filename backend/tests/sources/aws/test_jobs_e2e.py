"""The aws.ingest and aws.backfill jobs end to end: a connected account (moto) -> inventory and series in
Postgres, committed by the jobs themselves (not the rolled-back test session)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from aws_fixtures import boto, make_fleet, make_org_and_connection, put_series
from headroom.inventory.models import Volume
from headroom.platform.db import session_scope
from headroom.sources.aws.jobs import backfill_aws, ingest_aws
from headroom.sources.models import AwsBackfill, AwsConnection, CollectionSweep
from sqlalchemy import func, select, text
from xdist_workers import redis_db


def _connected(database_url: str, region: str, *, backfill_state: str | None) -> uuid.UUID:
    with session_scope(database_url) as db:
        org, conn = make_org_and_connection(db, region, name="e2e")
        if backfill_state:
            db.add(AwsBackfill(org_id=org.id, source_id=conn.id, state=backfill_state, days=1))
        conn_id: uuid.UUID = conn.id
        return conn_id


def test_ingest_job_fills_inventory_and_series(database_url: str, settings: Any, region: str,
                                               aws_endpoint_url: str) -> None:
    fleet = make_fleet(region, aws_endpoint_url)
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    cw = boto("cloudwatch", region, aws_endpoint_url)
    put_series(cw, "AWS/EBS", "VolumeId", fleet["data"][0], "VolumeWriteBytes",
               [(now - dt.timedelta(minutes=k), 1e6 * k) for k in range(1, 6)])
    cid = _connected(database_url, region, backfill_state="done")
    summary = ingest_aws(database_url, settings, now, connection_id=str(cid), force_inventory=True)
    assert summary["failed"] == 0 and summary["points"] == 5 and summary["api_calls"] == 1
    with session_scope(database_url) as db:
        conn = db.get(AwsConnection, cid)
        assert conn is not None and conn.status == "ok"
        assert db.scalar(select(func.count()).select_from(Volume).where(Volume.org_id == conn.org_id)) == 3
        values = db.execute(text(
            "SELECT count(*) FROM metric_series s JOIN metric_points p ON p.series_id = s.id "
            "WHERE s.org_id = :o AND s.metric = 'ebs.write_bytes'"), {"o": conn.org_id}).scalar_one()
        assert values >= 1
    # The next minute: nothing new in CloudWatch, nothing new written, the window starts at watermark - 10 min.
    again = ingest_aws(database_url, settings, now + dt.timedelta(minutes=1), connection_id=str(cid))
    assert again["failed"] == 0
    with session_scope(database_url) as db:
        sweeps = list(db.scalars(select(CollectionSweep).where(CollectionSweep.source_id == cid)
                                 .order_by(CollectionSweep.started_at)))
        assert [s.kind for s in sweeps] == ["incremental", "incremental"]
        # watermark (now) - 10 min overlap, widened to whole 5-minute periods for the 5-minute EC2 series and
        # moved back to a 5-minute clock boundary (CloudWatch's periods start at StartTime: period_aligned_plan)
        start = sweeps[1].window_start_at
        assert now - dt.timedelta(minutes=20) < start <= now - dt.timedelta(minutes=10) and start.minute % 5 == 0
        assert sweeps[1].api_calls == sweeps[1].lower_bound_calls == 1


def test_a_failing_source_is_marked_unhealthy_with_the_error(database_url: str, settings: Any, region: str) -> None:
    cid = _connected(database_url, region, backfill_state="done")
    with session_scope(database_url) as db:
        conn = db.get(AwsConnection, cid)
        assert conn is not None
        conn.auth_kind, conn.role_arn = "assume_role", None  # broken: no role to assume
    for minute in range(3):
        summary = ingest_aws(database_url, settings, dt.datetime(2026, 11, 2, 12, minute, tzinfo=dt.UTC),
                             connection_id=str(cid))
        assert summary["failed"] == 1
    with session_scope(database_url) as db:
        conn = db.get(AwsConnection, cid)
        assert conn is not None
        assert conn.status == "failing" and conn.consecutive_failures == 3
        assert conn.last_error is not None and "role ARN" in conn.last_error
        errors = list(db.scalars(select(CollectionSweep.error).where(CollectionSweep.source_id == cid)))
        assert len(errors) == 3 and all(e and "role ARN" in e for e in errors)


def test_backfill_job_reports_progress(database_url: str, settings: Any, region: str, aws_endpoint_url: str) -> None:
    fleet = make_fleet(region, aws_endpoint_url)
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    cw = boto("cloudwatch", region, aws_endpoint_url)
    hours_ago = [now - dt.timedelta(hours=h) for h in (2, 5, 20)]
    put_series(cw, "AWS/EBS", "VolumeId", fleet["data"][0], "VolumeReadOps", [(t, 42.0) for t in hours_ago])
    cid = _connected(database_url, region, backfill_state=None)
    result = backfill_aws(database_url, settings, now, connection_id=str(cid), days=1)
    assert result["state"] == "done" and result["points_written"] == 3
    assert result["points_done"] == result["points_total"] > 0
    with session_scope(database_url) as db:
        row = db.scalar(select(AwsBackfill).where(AwsBackfill.source_id == cid))
        assert row is not None and row.state == "done" and row.finished_at is not None
        sweep = db.scalar(select(CollectionSweep).where(CollectionSweep.source_id == cid))
        assert sweep is not None and sweep.kind == "backfill"
        # the day up to now, starting on a 5-minute boundary (the slots incremental sweeps write): at most 4
        # minutes of the oldest end are left out
        assert sweep.window_end_at == now and sweep.window_start_at.timestamp() % 300 == 0
        assert dt.timedelta(days=1) - dt.timedelta(minutes=4) <= sweep.window_end_at - sweep.window_start_at
        assert sweep.window_end_at - sweep.window_start_at <= dt.timedelta(days=1)


def test_with_a_broker_the_scheduled_sweep_is_one_task_per_connection(database_url: str, settings: Any,
                                                                      region: str) -> None:
    """With REDIS_URL (Celery workers), the scheduled aws.ingest publishes its round to the real Redis (a small
    round: one message per connection), for the scheduled minute and expiring as the per-minute schedule does;
    it sweeps nothing itself. Read back from the broker's list as Celery's workers would (kombu's message: base64
    JSON body), then each message run as a worker runs it: every connection is swept by its own run of the job."""
    import base64
    import json
    import os

    import redis
    from headroom.platform.jobs.dispatch import CHUNK_TASK
    from headroom.platform.jobs.registry import job as find_job
    from headroom.platform.jobs.rounds import run_chunk

    broker = redis_db(os.environ["HEADROOM_TEST_REDIS_URL"], 6)  # a database no other test reads
    client = redis.Redis.from_url(broker)
    client.delete("ingest", *client.keys("headroom:round:*"))  # the queue, and the rounds already queued (once each)
    cids = [_connected(database_url, region, backfill_state="done") for _ in range(2)]
    now = dt.datetime(2026, 11, 2, 12, 1, tzinfo=dt.UTC)
    with_broker = settings.model_copy(update={"redis_url": broker})
    try:
        summary = ingest_aws(database_url, with_broker, now)
        assert summary["fanned_out"] is True and summary["queued"] == summary["connections"] >= 2
        messages = [json.loads(raw) for raw in client.lrange("ingest", 0, -1)]
        tasks = [(m["headers"]["task"], json.loads(base64.b64decode(m["body"]))[1], m["headers"]["expires"])
                 for m in messages]
        mine = [t for t in tasks if set(t[1]["items"]) & {str(c) for c in cids}]
        assert len(mine) == 2 and sum(len(t[1]["items"]) for t in tasks) == summary["queued"]
        for task, kwargs, expires in mine:
            assert task == CHUNK_TASK and kwargs["job"] == "aws.ingest" and kwargs["key"] == "connection_id"
            assert kwargs["now_iso"] == now.isoformat() and len(kwargs["items"]) == 1
            assert expires is not None and expires == kwargs["expires_at"]  # 55 s after publishing
        with session_scope(database_url) as db:
            assert db.scalar(select(func.count()).select_from(CollectionSweep)
                             .where(CollectionSweep.source_id.in_(cids))) == 0

        def no_retry(item: str) -> None:
            raise AssertionError(f"{item} retried")

        for _task, kwargs, _expires in mine:
            ran = run_chunk(find_job("aws.ingest"), kwargs["key"], kwargs["items"], now, None, database_url,
                            with_broker, retryable=(), retry_alone=no_retry)
            assert ran["succeeded"] == 1, ran
        with session_scope(database_url) as db:
            assert db.scalar(select(func.count()).select_from(CollectionSweep)
                             .where(CollectionSweep.source_id.in_(cids))) == 2
    finally:
        client.delete("ingest")
        with session_scope(database_url) as db:
            db.execute(text("DELETE FROM organizations WHERE id IN (SELECT org_id FROM aws_connections "
                            "WHERE id = ANY(:c))"), {"c": cids})
