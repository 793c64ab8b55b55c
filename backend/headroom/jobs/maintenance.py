"""Time-series housekeeping: partitions ahead of time and retention. (Rollups are kept current by every write,
see headroom.store.timeseries.write_batches.)"""

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


JOBS: tuple[Job, ...] = (
    Job(
        name="timeseries.maintain",
        queue="maintenance",
        schedule=Schedule(minute="7", expires_seconds=3000),
        run=maintain_timeseries,
        description="Create upcoming partitions and apply the retention windows.",
    ),
)


