"""Outcome jobs: `outcomes.measure` every hour stores the outcome of each applied fix still being measured
(headroom.changes.service: ids in, the service does the rest). Re-running it rewrites the same rows."""

from __future__ import annotations

import datetime as dt
from typing import Any

from headroom.changes import service
from headroom.platform.jobs.context import job_context
from headroom.platform.jobs.registry import Job, Schedule
from headroom.platform.settings import Settings


def run_measure_outcomes(database_url: str, settings: Settings, now: dt.datetime, cluster_id: str | None = None,
                         **_: Any) -> dict[str, Any]:
    """Store the outcomes of every cluster's applied fixes (or the one given)."""
    return service.measure_outcomes(job_context(database_url, settings), now, cluster_id)


JOBS = (
    Job(
        name="outcomes.measure",
        queue="advice",
        schedule=Schedule(minute="40", expires_seconds=3000),
        run=run_measure_outcomes,
        description="Measure whether each applied fix did what its finding predicted (held, partly, missed), "
        "for the rules page's record per rule.",
    ),
)
