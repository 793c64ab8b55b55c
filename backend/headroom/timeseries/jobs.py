"""Time-series housekeeping: rollups of the hours writes changed, partitions ahead of time, and retention."""

from __future__ import annotations

import datetime as dt
from typing import Any

from headroom.platform.jobs.context import job_context
from headroom.platform.jobs.registry import Job, Schedule
from headroom.platform.settings import Settings
from headroom.timeseries import maintenance


def maintain_timeseries(database_url: str, settings: Settings, now: dt.datetime) -> dict[str, Any]:
    """Create partitions for the next two days and drop those past retention."""
    return maintenance.maintain(job_context(database_url, settings), now)


def drain_rollups(database_url: str, settings: Settings, now: dt.datetime, budget_seconds: float | None = None
                  ) -> dict[str, Any]:
    """Recompute the rollup buckets of every settled (series, hour) the writes changed, one committed batch at a
    time."""
    return maintenance.drain_rollups(job_context(database_url, settings), now, budget_seconds)


JOBS: tuple[Job, ...] = (
    Job(
        name="timeseries.rollups",
        queue="maintenance",
        schedule=Schedule(minute="*", expires_seconds=55),
        run=drain_rollups,
        description="Recompute the 5-minute and hourly rollups of the settled hours that new points changed.",
    ),
    Job(
        name="timeseries.maintain",
        queue="maintenance",
        schedule=Schedule(minute="7", expires_seconds=3000),
        run=maintain_timeseries,
        description="Create upcoming partitions and apply the retention windows.",
    ),
)


