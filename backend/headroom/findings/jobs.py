"""Advice jobs: run the advisor over each cluster's last window and record its findings (headroom.findings.advice_runs: ids in, the service does the rest).

`advice.run` runs every 15 minutes on the "advice" queue over every cluster (or one, by id, when the API asks);
each cluster is its own transaction, so one failing cluster does not hold back the others. `advice.demo_first`
runs a demo cluster's first advice as soon as the demo ingest has written data, instead of up to 15 minutes
later: it is a cheap no-op (one query) once the cluster has findings. It runs every minute on the "ingest" queue,
beside the ingest it follows, so a 15-minute round filling the "advice" queue does not hold it back.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from headroom.findings import advice_runs as service
from headroom.platform.jobs.context import job_context
from headroom.platform.jobs.registry import Job, Schedule
from headroom.platform.settings import Settings


def run_advice(
    database_url: str,
    settings: Settings,
    now: dt.datetime,
    cluster_id: str | None = None,
    window_hours: float = service.DEFAULT_WINDOW_HOURS,
    run_id: str | None = None,
    **_: Any,
) -> dict[str, Any]:
    """Advise every cluster (or the one given) on the window ending at `now`; return a summary per cluster."""
    return service.advise_clusters(job_context(database_url, settings), now, cluster_id, window_hours, run_id)


def run_demo_first_advice(database_url: str, settings: Settings, now: dt.datetime, **_: Any) -> dict[str, Any]:
    """Advise demo clusters that have data but no finding yet (the demo's first minutes)."""
    return service.advise_new_demo_clusters(job_context(database_url, settings), now)


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
        # Not "advice": a minute's run queued behind a 15-minute round of 1,000 advice runs waited out its 55 s
        # (7 of 10 expired in the load test, docs/scaling.md "1,000 clusters"); it follows the ingest it serves.
        queue="ingest",
        schedule=Schedule(minute="*", expires_seconds=55),
        run=run_demo_first_advice,
        description="Give a new demo cluster its first findings as soon as its data lands.",
    ),
)
