"""Projection jobs: `projections.run` every 10 minutes on the "advice" queue fits each cluster not fitted in the
last day (headroom.projections.service: ids in, the service does the rest)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from headroom.platform.jobs.context import job_context
from headroom.platform.jobs.registry import Job, Schedule
from headroom.platform.settings import Settings
from headroom.projections import service


def run_projections(
    database_url: str, settings: Settings, now: dt.datetime, cluster_id: str | None = None, force: bool = False,
    **_: Any,
) -> dict[str, Any]:
    """Fit the ceilings of every cluster due (or the one given)."""
    return service.project_clusters(job_context(database_url, settings), now, cluster_id, force)


JOBS = (
    Job(
        name="projections.run",
        queue="advice",
        schedule=Schedule(minute="*/10", expires_seconds=540),
        run=run_projections,
        description="Project each cluster's ceilings (days until IOPS, throughput, EBS bandwidth and disk space "
        "run out), once a day per cluster.",
    ),
)
