"""Prometheus ingest jobs: the per-minute incremental pull (+ status-port config polling) and the backfill."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import func, select, text

from headroom.inventory.tikv_configs import poll_cluster
from headroom.platform.db import engine_for, session_scope
from headroom.platform.jobs.registry import Job, Schedule
from headroom.platform.logging import get_logger
from headroom.platform.security import SecretBox
from headroom.platform.settings import Settings
from headroom.sources.models import PrometheusSource
from headroom.sources.prometheus import ingest
from headroom.sources.prometheus import service as ops

log = get_logger("headroom.sources.prometheus.jobs")

CONFIG_POLL_EVERY_MINUTES = 10
STALE_BACKFILL = dt.timedelta(minutes=30)
# A backfill replaced mid-run starts the new plan at once; more replacements than this in one run are left to
# the next queueing (no number from a source: a bound against a loop, not a tuning).
SUPERSEDED_RETRIES = 3


def _lock(db: Any, source_id: uuid.UUID) -> bool:
    # One run per source at a time: a slow pull must not overlap the next minute's run.
    return bool(db.scalar(select(func.pg_try_advisory_xact_lock(func.hashtext(f"prometheus:{source_id}")))))


def ingest_prometheus(
    database_url: str, settings: Settings, now: dt.datetime, source_id: str | None = None
) -> dict[str, Any]:
    """Pull every attached Prometheus source (or one) since its watermarks; queue a backfill for new sources.

    With a broker the scheduled run fans out one task per source, so a slow or unreachable Prometheus delays
    no other tenant; without one (in-process scheduler) the sources run here one after another.
    """
    from headroom.platform.jobs.dispatch import enqueue

    if source_id is not None:
        summary = _ingest_source(database_url, settings, now, uuid.UUID(source_id))
    else:
        with session_scope(database_url) as db:
            source_ids = list(
                db.scalars(select(PrometheusSource.id).where(PrometheusSource.cluster_id.is_not(None)))
            )
        if settings.redis_url:
            for sid in source_ids:
                enqueue("prometheus.ingest", settings, database_url, source_id=str(sid))
            return {"sources": len(source_ids), "fanned_out": True}
        summary = {"sources": len(source_ids), "points": 0, "failed": 0, "backfills_queued": 0}
        for sid in source_ids:
            one = _ingest_source(database_url, settings, now, sid)
            for key in ("points", "failed", "backfills_queued"):
                summary[key] += one[key]
    log.info("prometheus.ingest_done", **summary)
    return summary


def _ingest_source(
    database_url: str, settings: Settings, now: dt.datetime, source_id: uuid.UUID
) -> dict[str, Any]:
    summary: dict[str, Any] = {"sources": 1, "points": 0, "failed": 0, "backfills_queued": 0}
    queue_backfill = False
    with session_scope(database_url) as db:
        source = db.get(PrometheusSource, source_id)
        if source is None or source.cluster_id is None or not _lock(db, source_id):
            return summary
        backfill = ops.get_backfill(db, source)
        stale = (
            backfill is not None
            and backfill.status in ("queued", "running")
            and backfill.updated_at < now - STALE_BACKFILL
        )
        # A "running" backfill whose liveness lock is free lost its worker (killed): queue it again at once;
        # its plan is kept (request_backfill resets only rows not running), so the new run resumes it.
        dead = (
            backfill is not None
            and backfill.status == "running"
            and bool(db.scalar(select(func.pg_try_advisory_xact_lock(
                func.hashtext(f"prometheus-backfill:{source_id}")))))
        )
        if backfill is None or stale or dead:
            # A stale row with chunks stored is re-queued as it is (resumed), not restarted from zero.
            ops.request_backfill(db, source, now=now, restart=stale and (backfill is None or backfill.steps_done == 0))
            if dead and backfill is not None:
                backfill.status = "queued"  # so the next minute does not queue it again while it waits
            queue_backfill = True
        elif backfill.status in ("done", "failed"):
            box = SecretBox(settings.secret_key)
            with ingest.client_for(source, box, timeout_seconds=20.0) as client:
                stats = ops.run_incremental(db, source, client, now=now)
            if stats is None:
                summary["failed"] += 1
            else:
                summary["points"] += stats.points
            if now.minute % CONFIG_POLL_EVERY_MINUTES == 0:
                poll_cluster(db, source.org_id, source.cluster_id, now=now)
    if queue_backfill:  # after the commit, so the task sees the row
        from headroom.platform.jobs.dispatch import enqueue

        enqueue("prometheus.backfill", settings, database_url, source_id=str(source_id))
        summary["backfills_queued"] += 1
    return summary


def backfill_prometheus(
    database_url: str, settings: Settings, now: dt.datetime, source_id: str | None = None
) -> dict[str, Any]:
    """Import a source's history (14 days by default), committing progress after each chunk.

    Resumable: the chunks are planned when the backfill starts and each is marked done with its points, so a
    run after a killed one (a redelivery or a re-queue) fetches only the chunks not stored yet.
    """
    if source_id is None:  # the in-process scheduler's catch-up run calls every job without params
        return {"skipped": "no source_id"}
    sid = uuid.UUID(source_id)
    # A session-level advisory lock on a connection of its own marks the run as alive (as aws.backfill does):
    # it survives the per-chunk commits and Postgres drops it when a killed worker's connection goes away, so
    # the next run takes over at once instead of waiting for the row to look stale.
    with engine_for(database_url).connect() as lock_conn:
        key = {"k": f"prometheus-backfill:{sid}"}
        if not lock_conn.execute(text("SELECT pg_try_advisory_lock(hashtext(:k))"), key).scalar():
            return {"skipped": "already running"}
        try:
            return _backfill(database_url, settings, now, sid)
        finally:
            lock_conn.execute(text("SELECT pg_advisory_unlock(hashtext(:k))"), key)
            lock_conn.commit()


def _backfill(database_url: str, settings: Settings, now: dt.datetime, source_id: uuid.UUID) -> dict[str, Any]:
    box = SecretBox(settings.secret_key)
    for _attempt in range(SUPERSEDED_RETRIES):
        try:
            with session_scope(database_url) as db:
                source = db.get(PrometheusSource, source_id)
                if source is None or source.cluster_id is None:
                    return {"skipped": "source missing or not attached to a cluster"}
                with ingest.client_for(source, box) as client:
                    row = ops.run_backfill(db, source, client, now=now, checkpoint=db.commit)
                poll_cluster(db, source.org_id, source.cluster_id, now=now)
                return {"status": row.status, "points": row.points_written, "steps": row.steps_done,
                        "steps_total": row.steps_total}
        except ingest.BackfillSuperseded:  # a new backfill was asked for mid-run: run that one
            log.info("prometheus.backfill_superseded", source=str(source_id))
    return {"skipped": "superseded"}


JOBS: tuple[Job, ...] = (
    Job(
        name="prometheus.ingest",
        queue="ingest",
        schedule=Schedule(minute="*", expires_seconds=55),
        run=ingest_prometheus,
        description="Pull the last minutes of TiKV and node_exporter series from every Prometheus source.",
    ),
    Job(
        name="prometheus.backfill",
        queue="ingest",
        schedule=None,
        run=backfill_prometheus,
        description="Import a Prometheus source's history (14 days by default) with progress.",
    ),
)
