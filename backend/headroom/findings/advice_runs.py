"""On-demand advice runs: at most one queued or running per cluster (advice_runs, keyed by cluster), and a per-org
request limit (docs/advise-limits.md). The route claims a run, commits, then queues the job; the job releases
its run when it ends. Callers commit.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from headroom.clusters.models import Cluster
from headroom.findings.models import AdviceRun
from headroom.platform.jobs.context import JobContext
from headroom.platform.logging import get_logger

# A run not released after this long lost its worker or its queued message (a run of one cluster takes seconds):
# the next request replaces it. Also the period of the scheduled advice.run, which advises every cluster anyway.
ADVICE_RUN_STALE = dt.timedelta(minutes=15)
# New on-demand runs an organisation may queue per window (requests for a cluster already queued are free).
ADVISE_PER_ORG = 10
ADVISE_WINDOW_SECONDS = 60


def pending_run(db: Session, cluster: Cluster, now: dt.datetime) -> AdviceRun | None:
    """The cluster's queued or running on-demand run, unless it is stale."""
    return db.scalar(
        select(AdviceRun).where(
            AdviceRun.cluster_id == cluster.id,
            AdviceRun.org_id == cluster.org_id,
            AdviceRun.requested_at >= now - ADVICE_RUN_STALE,
        )
    )


def claim_run(db: Session, cluster: Cluster, now: dt.datetime) -> tuple[str, bool]:
    """Record a new run for the cluster unless a fresh one exists; return (task id, whether it is new).

    One statement, so two concurrent requests cannot both claim: the second waits for the first's row and,
    finding it fresh, gets its task id."""
    task_id = str(uuid.uuid4())
    stmt = (
        insert(AdviceRun)
        .values(cluster_id=cluster.id, org_id=cluster.org_id, task_id=task_id, requested_at=now)
        .on_conflict_do_update(
            index_elements=[AdviceRun.cluster_id],
            set_={"task_id": task_id, "requested_at": now},
            where=AdviceRun.requested_at < now - ADVICE_RUN_STALE,
        )
        .returning(AdviceRun.task_id)
    )
    claimed = db.scalar(stmt)
    if claimed is not None:
        return claimed, True
    existing = db.scalar(select(AdviceRun.task_id).where(AdviceRun.cluster_id == cluster.id))
    if existing is None:  # released between the two statements: claim again
        return claim_run(db, cluster, now)
    return existing, False


def release_run(db: Session, cluster_id: uuid.UUID, task_id: str) -> None:
    """Forget the run (it ended, or it could not be queued); a newer run of the cluster is left alone."""
    db.execute(delete(AdviceRun).where(AdviceRun.cluster_id == cluster_id, AdviceRun.task_id == task_id))


# --- the advice jobs' work (headroom.findings.jobs: ids in, these do the rest) ---------------------------------

log = get_logger("headroom.findings.advice_runs")

# The window the advisor reads: a full day covers the diurnal peak and a gp2 bucket's drain and refill.
DEFAULT_WINDOW_HOURS = 24
DEMO_FIRST_RUN_WITHIN = dt.timedelta(days=1)


def _cluster_ids(ctx: JobContext, cluster_id: str | None) -> list[uuid.UUID]:
    with ctx.unit() as db:
        query = select(Cluster.id).order_by(Cluster.created_at)
        if cluster_id is not None:
            query = query.where(Cluster.id == uuid.UUID(cluster_id))
        return list(db.scalars(query))


def _advise_one(ctx: JobContext, cluster_id: uuid.UUID, now: dt.datetime, window_hours: float,
                advised_orgs: set[uuid.UUID] | None = None) -> dict[str, Any]:
    from headroom.findings import service as findings

    with ctx.unit() as db:
        cluster = db.get(Cluster, cluster_id)
        if cluster is None:  # deleted since it was listed
            return {"cluster_id": str(cluster_id), "skipped": "cluster deleted"}
        summary = findings.advise_cluster(db, cluster, now=now, window=dt.timedelta(hours=window_hours))
        if advised_orgs is not None:
            advised_orgs.add(cluster.org_id)
        return summary.as_dict()


def _prepare_previews(ctx: JobContext, org_ids: set[uuid.UUID]) -> None:
    """Queue the weekly email's preview of each org whose findings the run just committed (digest.preview), so the
    Weekly email page reads it rendered. The job renders it only for an org whose page was opened today
    (digest.service.WATCHED_FOR; the others cost it a cache read), and renders the version current when it runs:
    previews queued by several clusters of one org that finish close together render once."""
    for org_id in sorted(org_ids, key=str):
        try:
            ctx.enqueue("digest.preview", org_id=str(org_id))
        except Exception:  # noqa: BLE001 - the page renders it on its first visit instead; logged
            log.warning("advice.preview_not_queued", org_id=str(org_id))


def advise_clusters(
    ctx: JobContext,
    now: dt.datetime,
    cluster_id: str | None = None,
    window_hours: float = DEFAULT_WINDOW_HOURS,
    run_id: str | None = None,
) -> dict[str, Any]:
    """Advise every cluster (or the one given) on the window ending at `now`; return a summary per cluster.

    `run_id` is an on-demand run's id (see `claim_run`): released when the run ends, failed or not, so the
    next request for the cluster queues again."""
    if cluster_id is None:  # the scheduled round: one task per cluster when workers share it (Celery)
        ids = _cluster_ids(ctx, None)
        fanned = ctx.fan_out("advice.run", "cluster_id", ids, now)
        if fanned is not None:
            return {"clusters": [], "failed": 0, **fanned}
    results: list[dict[str, Any]] = []
    failed = 0
    advised_orgs: set[uuid.UUID] = set()
    try:
        for cid in ids if cluster_id is None else _cluster_ids(ctx, cluster_id):
            try:
                results.append(_advise_one(ctx, cid, now, window_hours, advised_orgs))
            except Exception:  # noqa: BLE001 - one cluster's bad data must not stop the others; it is logged
                failed += 1
                log.exception("advice.failed", cluster_id=str(cid))
    finally:
        if run_id is not None and cluster_id is not None:
            _release(ctx, uuid.UUID(cluster_id), run_id)
    _prepare_previews(ctx, advised_orgs)
    log.info("advice.ran", clusters=len(results), failed=failed)
    return {"clusters": results, "failed": failed}


def _release(ctx: JobContext, cluster_id: uuid.UUID, run_id: str) -> None:
    try:
        with ctx.unit() as db:
            release_run(db, cluster_id, run_id)
    except Exception:  # noqa: BLE001 - the run then expires (ADVICE_RUN_STALE); logged
        log.exception("advice.release_failed", cluster_id=str(cluster_id))


def demo_clusters_awaiting_advice(db: Session, now: dt.datetime) -> list[uuid.UUID]:
    """Return the demo clusters created in the last day that have series but were never advised."""
    from headroom.timeseries.repository import has_series

    return list(
        db.scalars(
            select(Cluster.id).where(
                Cluster.is_demo,
                Cluster.created_at > now - DEMO_FIRST_RUN_WITHIN,
                Cluster.advised_at.is_(None),
                has_series(Cluster.id),
            )
        )
    )


def advise_new_demo_clusters(ctx: JobContext, now: dt.datetime) -> dict[str, Any]:
    """Advise demo clusters that have data but no finding yet (the demo's first minutes)."""
    if not ctx.settings.demo_fleet:
        return {"clusters": []}
    with ctx.unit() as db:
        pending = demo_clusters_awaiting_advice(db, now)
    results = []
    advised_orgs: set[uuid.UUID] = set()
    for cid in pending:
        try:
            results.append(_advise_one(ctx, cid, now, DEFAULT_WINDOW_HOURS, advised_orgs))
        except Exception:  # noqa: BLE001 - logged; the next minute tries again
            log.exception("advice.failed", cluster_id=str(cid))
    _prepare_previews(ctx, advised_orgs)
    return {"clusters": results}
