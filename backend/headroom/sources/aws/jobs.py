"""AWS ingest jobs: the per-minute incremental CloudWatch pull (+ inventory every 15 minutes) and the backfill."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import func, select, text

from headroom.inventory.models import Instance
from headroom.platform.db import engine_for, session_scope
from headroom.platform.jobs.registry import Job, Schedule
from headroom.platform.logging import get_logger
from headroom.platform.security import SecretBox
from headroom.platform.settings import Settings
from headroom.sources.aws import ingest
from headroom.sources.aws.session import clients_for
from headroom.sources.health import record_failure, record_success
from headroom.sources.models import AwsConnection, CollectionSweep

log = get_logger("headroom.sources.aws.jobs")

INVENTORY_EVERY_MINUTES = 15
STALE_BACKFILL = dt.timedelta(minutes=30)
# A backfill replaced mid-run (new span asked for) starts the new plan at once; more replacements than this
# in one run are left to the next queueing (no number from a source: a bound against a loop, not a tuning).
SUPERSEDED_RETRIES = 3


def _lock(db: Any, key: str) -> bool:
    # One run per connection at a time: a slow sweep must not overlap the next minute's.
    return bool(db.scalar(select(func.pg_try_advisory_xact_lock(func.hashtext(key)))))


def _record_failure(database_url: str, connection_id: uuid.UUID, now: dt.datetime, exc: BaseException) -> None:
    # The failed run's own writes were rolled back; its sweep row is recorded here so the UI shows the error.
    with session_scope(database_url) as db:
        conn = db.get(AwsConnection, connection_id)
        if conn is not None:
            record_failure(conn, now, f"{type(exc).__name__}: {exc}")
            db.add(CollectionSweep(org_id=conn.org_id, source_kind="aws", source_id=conn.id, kind="incremental",
                                   started_at=now, finished_at=now, error=conn.last_error))


def _inventory_due(db: Any, connection: AwsConnection, region: str, now: dt.datetime, force: bool) -> bool:
    if force or now.minute % INVENTORY_EVERY_MINUTES == 0:
        return True
    known = db.scalar(select(func.count()).select_from(Instance).where(
        Instance.aws_connection_id == connection.id, Instance.region == region))
    return not known


def ingest_aws(database_url: str, settings: Settings, now: dt.datetime, connection_id: str | None = None,
               force_inventory: bool = False) -> dict[str, Any]:
    """Sweep every AWS connection (or one): inventory when due, then CloudWatch since the watermarks."""
    box = SecretBox(settings.secret_key)
    with session_scope(database_url) as db:
        query = select(AwsConnection.id)
        if connection_id:
            query = query.where(AwsConnection.id == uuid.UUID(connection_id))
        ids = list(db.scalars(query))
    summary: dict[str, Any] = {"connections": len(ids), "points": 0, "api_calls": 0, "failed": 0,
                               "backfills_queued": 0}
    for cid in ids:
        queue_backfill = False
        try:
            with session_scope(database_url) as db:
                conn = db.get(AwsConnection, cid)
                if conn is None or not _lock(db, f"aws:{cid}"):
                    continue
                backfill = ingest.get_backfill(db, conn)
                # A "running" backfill whose lock is free lost its worker (killed): queue it again.
                dead = backfill is not None and backfill.state == "running" and _lock(db, f"aws-backfill:{cid}")
                if backfill is None or dead or (
                    backfill.state == "queued" and backfill.updated_at < now - STALE_BACKFILL
                ):
                    # Same span: an unfinished plan is resumed, not restarted.
                    ingest.request_backfill(db, conn, days=backfill.days if backfill else ingest.DEFAULT_BACKFILL_DAYS)
                    queue_backfill = True
                for region in conn.regions:
                    clients = clients_for(conn, region, box, endpoint_url=settings.aws_endpoint_url)
                    if _inventory_due(db, conn, region, now, force_inventory):
                        ingest.sync_inventory(db, conn, clients, now)
                    outcome = ingest.run_sweep(db, conn, clients, now=now)
                    summary["points"] += outcome.points_written
                    summary["api_calls"] += outcome.sweep.api_calls
                record_success(conn, now)
        except Exception as exc:  # noqa: BLE001 - one failing account must not stop the others
            summary["failed"] += 1
            log.warning("aws.ingest_failed", source=str(cid), error_type=type(exc).__name__)
            _record_failure(database_url, cid, now, exc)
            continue
        if queue_backfill:  # after the commit, so the task sees the row
            from headroom.platform.jobs.dispatch import enqueue

            enqueue("aws.backfill", settings, database_url, connection_id=str(cid))
            summary["backfills_queued"] += 1
    log.info("aws.ingest_done", **summary)
    return summary


def backfill_aws(database_url: str, settings: Settings, now: dt.datetime, connection_id: str | None = None,
                 days: int | None = None) -> dict[str, Any]:
    """Import a connection's CloudWatch history (14 days by default), committing progress after each request.

    Resumable: the plan's requests are stored when it starts and each is marked done with its points, so a
    run after a killed one (redelivery, re-queue, or a retry of a failed one) fetches only what is missing.
    """
    if connection_id is None:  # the in-process scheduler's catch-up run calls every job without params
        return {"skipped": "no connection_id"}
    cid = uuid.UUID(connection_id)
    # A session-level advisory lock on a connection of its own marks the run as alive: it survives the
    # per-request commits and Postgres drops it the moment a killed worker's connection goes away, so the
    # next run (a redelivery or a new request) takes over at once instead of waiting for a timeout.
    with engine_for(database_url).connect() as lock_conn:
        key = {"k": f"aws-backfill:{cid}"}
        if not lock_conn.execute(text("SELECT pg_try_advisory_lock(hashtext(:k))"), key).scalar():
            return {"skipped": "already running"}
        try:
            for _attempt in range(SUPERSEDED_RETRIES):
                try:
                    return _backfill(database_url, settings, now, cid, days)
                except ingest.BackfillSuperseded:  # a new backfill was asked for mid-run: run that one
                    log.info("aws.backfill_superseded", source=str(cid))
                    days = None
            return {"skipped": "superseded"}
        finally:
            lock_conn.execute(text("SELECT pg_advisory_unlock(hashtext(:k))"), key)
            lock_conn.commit()


def _backfill(database_url: str, settings: Settings, now: dt.datetime, cid: uuid.UUID,
              days: int | None) -> dict[str, Any]:
    box = SecretBox(settings.secret_key)
    try:
        with session_scope(database_url) as db:
            conn = db.get(AwsConnection, cid)
            if conn is None:
                return {"skipped": "connection missing"}
            row = ingest.get_backfill(db, conn)
            span = days or (row.days if row is not None else ingest.DEFAULT_BACKFILL_DAYS)
            if row is not None and row.state == "done" and row.days == span:
                # Every way of asking for a backfill queues the row first; a finished one here is a redelivered
                # task (acks_late): it has nothing left to fetch, and fetching it again would be paid again.
                return {"state": row.state, "points_done": row.points_done, "points_total": row.points_total,
                        "points_written": row.points_written, "steps_run": 0, "skipped": "already done"}
            if row is None or row.days != span or row.state == "done":
                row = ingest.request_backfill(db, conn, days=span)  # a new plan (else: resume this one)
            row.state, row.started_at, row.finished_at, row.last_error = "running", now, None, None
            # The window's end is fixed by the first run: a resumed run reads exactly the window planned.
            # Minutes after it are the incremental sweep's (it has run every minute since the connection).
            row.window_end_at = row.window_end_at or ingest.floor_minute(now)
            clients: dict[str, Any] = {}
            account = conn

            def clients_for_region(region: str) -> Any:
                if region not in clients:
                    clients[region] = clients_for(account, region, box, endpoint_url=settings.aws_endpoint_url)
                return clients[region]

            for region in conn.regions:
                ingest.sync_inventory(db, conn, clients_for_region(region), now)
            ingest.plan_backfill(db, conn, conn.regions, end=row.window_end_at, days=span)
            db.commit()  # the plan is durable before the first request is paid for
            outcome = ingest.run_backfill(db, conn, row, clients_for_region, now=now, checkpoint=db.commit)
            row.state, row.finished_at = "done", dt.datetime.now(dt.UTC)
            record_success(conn, now)
            log.info("aws.backfill_done", source=str(cid), steps_run=outcome.steps_run,
                     steps_skipped=outcome.steps_skipped, calls=outcome.api_calls, points=outcome.points_written)
            return {"state": row.state, "points_done": row.points_done, "points_total": row.points_total,
                    "points_written": row.points_written, "steps_run": outcome.steps_run,
                    "steps_skipped": outcome.steps_skipped, "api_calls": outcome.api_calls}
    except ingest.BackfillSuperseded:
        raise
    except Exception as exc:
        log.warning("aws.backfill_failed", source=str(cid), error_type=type(exc).__name__)
        with session_scope(database_url) as db:
            conn = db.get(AwsConnection, cid)
            if conn is not None:
                record_failure(conn, now, f"{type(exc).__name__}: {exc}")
                failed = ingest.get_backfill(db, conn)
                if failed is not None:  # progress stays: the next run resumes after the last stored request
                    failed.state, failed.last_error = "failed", f"{type(exc).__name__}: {exc}"[:2000]
                    failed.finished_at = now
        raise


JOBS: tuple[Job, ...] = (
    Job(
        name="aws.ingest",
        queue="ingest",
        schedule=Schedule(minute="*", expires_seconds=55),
        run=ingest_aws,
        description="Pull CloudWatch EBS/EC2 series of every AWS connection since its watermarks; inventory.",
    ),
    Job(
        name="aws.backfill",
        queue="ingest",
        schedule=None,
        run=backfill_aws,
        description="Import an AWS connection's CloudWatch history (14 days by default) with progress.",
    ),
)
