"""The table of background jobs: name (Celery task name `domain.verb`), queue, schedule and the function."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from headroom.core.db import session_scope
from headroom.core.logging import get_logger
from headroom.core.settings import Settings
from headroom.store import timeseries

log = get_logger("headroom.jobs")

QUEUES = ("ingest", "advice", "email", "maintenance")


@dataclass(frozen=True)
class Schedule:
    """A cron-like schedule: minute and hour fields as Celery's crontab takes them ("*", "*/5", "7")."""

    minute: str = "*"
    hour: str = "*"
    day_of_week: str = "*"
    # Seconds after which a queued run is dropped rather than run late (Celery `expires`).
    expires_seconds: int = 300


@dataclass(frozen=True)
class Job:
    name: str
    queue: str
    schedule: Schedule | None
    run: Callable[[str, Settings, dt.datetime], dict[str, Any]]
    description: str


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


def job(name: str) -> Job:
    for entry in JOBS:
        if entry.name == name:
            return entry
    raise KeyError(name)
