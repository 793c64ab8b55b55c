"""The fleet's job: `fleet.score` every 15 minutes on the "advice" queue stores each cluster's headroom score and
the overview's 7-day peaks, and the burst forecasts of its last advice round when that round did not store them
(headroom.fleet.service: ids in, the service does the rest)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from headroom.fleet import service
from headroom.platform.jobs.context import job_context
from headroom.platform.jobs.registry import Job, Schedule
from headroom.platform.settings import Settings


def score_fleet(database_url: str, settings: Settings, now: dt.datetime, cluster_id: str | None = None,
                **_: Any) -> dict[str, Any]:
    """Store the headroom score of every cluster (or the one given) over the day ending now."""
    return service.score_clusters(job_context(database_url, settings), now, cluster_id)


JOBS = (
    Job(
        name="fleet.score",
        queue="advice",
        # 5 minutes after each advice round, so the two rounds do not queue at the same minute
        schedule=Schedule(minute="5,20,35,50", expires_seconds=600),
        run=score_fleet,
        description="Store each cluster's headroom score (its last day's tightest ceiling) for the fleet page, the "
                    "overview's 7-day peaks, and the burst forecasts of its last advice round if that round did not.",
    ),
)
