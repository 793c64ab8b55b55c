"""Advice jobs: run the advisor over each cluster's last window and record its findings (services.findings).

`advice.run` runs every 15 minutes on the "advice" queue over every cluster (or one, by id, when the API asks);
each cluster is its own transaction, so one failing cluster does not hold back the others. `advice.demo_first`
runs a demo cluster's first advice as soon as the demo ingest has written data, instead of up to 15 minutes
later: it is a cheap no-op (one query) once the cluster has findings.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from headroom.platform.db import session_scope
from headroom.platform.jobs.registry import Job, Schedule
from headroom.platform.logging import get_logger
from headroom.platform.settings import Settings

log = get_logger("headroom.findings.jobs")

# The window the advisor reads: a full day covers the diurnal peak and a gp2 bucket's drain and refill.
DEFAULT_WINDOW_HOURS = 24
DEMO_FIRST_RUN_WITHIN = dt.timedelta(days=1)


def _cluster_ids(database_url: str, cluster_id: str | None) -> list[uuid.UUID]:
    from headroom.clusters.models import Cluster

    with session_scope(database_url) as db:
        query = select(Cluster.id).order_by(Cluster.created_at)
        if cluster_id is not None:
            query = query.where(Cluster.id == uuid.UUID(cluster_id))
        return list(db.scalars(query))


def _advise_one(database_url: str, cluster_id: uuid.UUID, now: dt.datetime, window_hours: float) -> dict[str, Any]:
    from headroom.clusters.models import Cluster
    from headroom.findings import service as findings

    with session_scope(database_url) as db:
        cluster = db.get(Cluster, cluster_id)
        if cluster is None:  # deleted since it was listed
            return {"cluster_id": str(cluster_id), "skipped": "cluster deleted"}
        summary = findings.advise_cluster(db, cluster, now=now, window=dt.timedelta(hours=window_hours))
        return summary.as_dict()


def run_advice(
    database_url: str,
    settings: Settings,
    now: dt.datetime,
    cluster_id: str | None = None,
    window_hours: float = DEFAULT_WINDOW_HOURS,
    run_id: str | None = None,
    **_: Any,
) -> dict[str, Any]:
    """Advise every cluster (or the one given) on the window ending at `now`; return a summary per cluster.

    `run_id` is an on-demand run's id (services.advice_runs): released when the run ends, failed or not, so the
    next request for the cluster queues again."""
    results: list[dict[str, Any]] = []
    failed = 0
    try:
        for cid in _cluster_ids(database_url, cluster_id):
            try:
                results.append(_advise_one(database_url, cid, now, window_hours))
            except Exception:  # noqa: BLE001 - one cluster's bad data must not stop the others; it is logged
                failed += 1
                log.exception("advice.failed", cluster_id=str(cid))
    finally:
        if run_id is not None and cluster_id is not None:
            _release(database_url, uuid.UUID(cluster_id), run_id)
    log.info("advice.ran", clusters=len(results), failed=failed)
    return {"clusters": results, "failed": failed}


def _release(database_url: str, cluster_id: uuid.UUID, run_id: str) -> None:
    from headroom.findings import advice_runs

    try:
        with session_scope(database_url) as db:
            advice_runs.release_run(db, cluster_id, run_id)
    except Exception:  # noqa: BLE001 - the run then expires (advice_runs.ADVICE_RUN_STALE); logged
        log.exception("advice.release_failed", cluster_id=str(cluster_id))


def demo_clusters_awaiting_advice(db: Session, now: dt.datetime) -> list[uuid.UUID]:
    """Return the demo clusters created in the last day that have series but no finding yet."""
    from headroom.clusters.models import Cluster
    from headroom.findings.models import Finding
    from headroom.timeseries.models import MetricSeries

    return list(
        db.scalars(
            select(Cluster.id).where(
                Cluster.is_demo,
                Cluster.created_at > now - DEMO_FIRST_RUN_WITHIN,
                ~exists().where(Finding.cluster_id == Cluster.id),
                exists().where(MetricSeries.cluster_id == Cluster.id),
            )
        )
    )


def run_demo_first_advice(database_url: str, settings: Settings, now: dt.datetime, **_: Any) -> dict[str, Any]:
    """Advise demo clusters that have data but no finding yet (the demo's first minutes)."""
    if not settings.demo_fleet:
        return {"clusters": []}
    with session_scope(database_url) as db:
        pending = demo_clusters_awaiting_advice(db, now)
    results = []
    for cid in pending:
        try:
            results.append(_advise_one(database_url, cid, now, DEFAULT_WINDOW_HOURS))
        except Exception:  # noqa: BLE001 - logged; the next minute tries again
            log.exception("advice.failed", cluster_id=str(cid))
    return {"clusters": results}


JOBS = (
    Job(
        name="advice.run",
        queue="advice",
        schedule=Schedule(minute="*/15", expires_seconds=600),
        run=run_advice,
        description="Run the advisor over each cluster's last 24 hours and update its findings.",
    ),
    Job(
        name="advice.demo_first",
        queue="advice",
        schedule=Schedule(minute="*", expires_seconds=55),
        run=run_demo_first_advice,
        description="Give a new demo cluster its first findings as soon as its data lands.",
    ),
)
