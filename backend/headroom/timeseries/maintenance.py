"""Time-series housekeeping (the timeseries jobs' work: ids in, these do the rest): partitions ahead of time,
retention, and the rollups of the hours writes changed, one committed batch at a time."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

from headroom.platform.jobs.context import JobContext
from headroom.platform.logging import get_logger
from headroom.timeseries import repository as timeseries

log = get_logger("headroom.timeseries.maintenance")


def maintain(ctx: JobContext, now: dt.datetime) -> dict[str, Any]:
    """Create partitions for the next two days and drop those past retention."""
    with ctx.unit() as db:
        created = timeseries.ensure_partitions(db, now - dt.timedelta(days=1), now + dt.timedelta(days=2))
        dropped = timeseries.apply_retention(
            db, now=now, raw_days=ctx.settings.raw_retention_days, rollup_days=ctx.settings.rollup_retention_days
        )
    log.info("timeseries.maintained", created=created, dropped=len(dropped))
    return {"created": created, "dropped": dropped}


# A run stops taking new batches after this long so the next minute's run does not pile up behind it (the queue
# is shared: runs in parallel split it through SKIP LOCKED). Headroom choice: under the one-minute schedule.
DRAIN_BUDGET_SECONDS = 45.0


def drain_rollups(ctx: JobContext, now: dt.datetime, budget_seconds: float | None = None) -> dict[str, Any]:
    """Recompute the rollup buckets of every settled (series, hour) the writes changed, one committed batch at a
    time; `pending` counts the settled hours left (the open ones wait for their hour to settle)."""
    budget = DRAIN_BUDGET_SECONDS if budget_seconds is None else budget_seconds
    started = time.monotonic()
    pairs = batches = 0
    while True:
        with ctx.unit() as db:
            done = timeseries.drain_rollups(db, now=now)
        if not done:
            break
        pairs += done
        batches += 1
        if time.monotonic() - started > budget:
            break
    with ctx.unit() as db:
        left = timeseries.rollups_pending(db, now=now)
    if pairs:
        log.info("timeseries.rollups", pairs=pairs, batches=batches, pending=left,
                 seconds=round(time.monotonic() - started, 2))
    return {"pairs": pairs, "batches": batches, "pending": left}
