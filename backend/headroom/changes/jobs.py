"""Outcome jobs: `outcomes.measure` every hour stores the outcome of each applied fix still being measured
(headroom.changes.service: ids in, the service does the rest). Re-running it rewrites the same rows.
`changes.predict` tries the what-ifs a change ledger load left for later and keeps them (re-running it finds them
kept and tries nothing)."""

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


def run_predict(database_url: str, settings: Settings, now: dt.datetime, cluster_id: str | None = None,
                org_id: str | None = None, **_: Any) -> dict[str, Any]:
    """Try and keep the what-if of the cluster's newest changes that a ledger load left for later."""
    return service.predict_changes(job_context(database_url, settings), now, cluster_id=cluster_id, org_id=org_id)


JOBS = (
    Job(
        name="outcomes.measure",
        queue="advice",
        schedule=Schedule(minute="40", expires_seconds=3000),
        run=run_measure_outcomes,
        description="Measure whether each applied fix did what its finding predicted (held, partly, missed), "
        "for the rules page's record per rule.",
    ),
    Job(
        name="changes.predict",
        queue="advice",
        schedule=None,
        run=run_predict,
        description="Try the what-if of a cluster's newest changes that its change ledger left for later, and keep "
        "it for the next load.",
    ),
)
