"""On-demand advice runs: at most one queued or running per cluster (advice_runs, keyed by cluster), and a per-org
request limit (docs/advise-limits.md). The route claims a run, commits, then queues the job; the job releases
its run when it ends. Callers commit.
"""

from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from headroom.clusters.models import Cluster
from headroom.findings.models import AdviceRun

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
