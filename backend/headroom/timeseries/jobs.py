"""Time-series housekeeping: rollups of the days writes changed, partitions ahead of time, and retention."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

from headroom.platform.db import session_scope
from headroom.platform.jobs.registry import Job, Schedule
from headroom.platform.logging import get_logger
from headroom.platform.settings import Settings
from headroom.timeseries import repository as timeseries

log = get_logger("headroom.timeseries.jobs")


def maintain_timeseries(database_url: str, settings: Settings, now: dt.datetime) -> dict[str, Any]:
    """Create partitions for the next two days and drop those past retention."""
    with session_scope(database_url) as db:
        created = timeseries.ensure_partitions(db, now - dt.timedelta(days=1), now + dt.timedelta(days=2))
        dropped = timeseries.apply_retention(
            db, now=now, raw_days=settings.raw_retention_days, rollup_days=settings.rollup_retention_days
        )
    log.info("timeseries.maintained", created=created, dropped=len(dropped))
    return {"created": created, "dropped": dropped}


# A run stops taking new batches after this long so the next minute's run does not pile up behind it (the queue
# is shared: runs in parallel split it through SKIP LOCKED). Headroom choice: under the one-minute schedule.
DRAIN_BUDGET_SECONDS = 45.0


def drain_rollups(database_url: str, settings: Settings, now: dt.datetime, budget_seconds: float | None = None
                  ) -> dict[str, Any]:
    """Recompute the rollups of every (series, day) the writes changed, one committed batch at a time."""
    budget = DRAIN_BUDGET_SECONDS if budget_seconds is None else budget_seconds
    started = time.monotonic()
    pairs = batches = 0
    while True:
        with session_scope(database_url) as db:
            done = timeseries.drain_rollups(db)
        if not done:
            break
        pairs += done
        batches += 1
        if time.monotonic() - started > budget:
            break
    with session_scope(database_url) as db:
        left = timeseries.rollups_pending(db)
    if pairs:
        log.info("timeseries.rollups", pairs=pairs, batches=batches, pending=left,
                 seconds=round(time.monotonic() - started, 2))
    return {"pairs": pairs, "batches": batches, "pending": left}


JOBS: tuple[Job, ...] = (
    Job(
        name="timeseries.rollups",
        queue="maintenance",
        schedule=Schedule(minute="*", expires_seconds=55),
        run=drain_rollups,
        description="Recompute the 5-minute and hourly rollups of the days that new points changed.",
    ),
    Job(
        name="timeseries.maintain",
        queue="maintenance",
        schedule=Schedule(minute="7", expires_seconds=3000),
        run=maintain_timeseries,
        description="Create upcoming partitions and apply the retention windows.",
    ),
)


