"""Time-series housekeeping jobs: partitions ahead of time, retention, rollups."""

from __future__ import annotations

import datetime as dt
from typing import Any

from headroom.core.db import session_scope
from headroom.core.logging import get_logger
from headroom.core.settings import Settings
from headroom.jobs.registry import Job, Schedule
from headroom.store import timeseries

log = get_logger("headroom.jobs.maintenance")


def maintain_timeseries(database_url: str, settings: Settings, now: dt.datetime) -> dict[str, Any]:
    """Create partitions for the next two days and drop those past retention."""
    with session_scope(database_url) as db:
        created = timeseries.ensure_partitions(db, now - dt.timedelta(days=1), now + dt.timedelta(days=2))
        dropped = timeseries.apply_retention(
            db, now=now, raw_days=settings.raw_retention_days, rollup_days=settings.rollup_retention_days
        )
    log.info("timeseries.maintained", created=created, dropped=len(dropped))
    return {"created": created, "dropped": dropped}


def refresh_recent_rollups(database_url: str, settings: Settings, now: dt.datetime) -> dict[str, Any]:
    """Recompute today's (and, just after midnight, yesterday's) rollups from the raw points."""
    with session_scope(database_url) as db:
        rows = timeseries.refresh_rollups(db, now - dt.timedelta(hours=1), now + dt.timedelta(minutes=1))
    return {"rows": rows}


JOBS: tuple[Job, ...] = (
    Job(
        name="timeseries.maintain",
        queue="maintenance",
        schedule=Schedule(minute="7", expires_seconds=3000),
        run=maintain_timeseries,
        description="Create upcoming partitions and apply the retention windows.",
    ),
    Job(
        name="timeseries.rollup",
        queue="maintenance",
        schedule=Schedule(minute="*/5", expires_seconds=240),
        run=refresh_recent_rollups,
        description="Refresh the 5-minute and hourly rollups the dashboards read.",
    ),
)


