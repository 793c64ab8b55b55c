"""The demo fleet's ingest job: simulate each demo cluster up to now through the same store as collectors."""

from __future__ import annotations

import datetime as dt
from typing import Any

from headroom.platform.db import session_scope
from headroom.platform.jobs.registry import Job, Schedule
from headroom.platform.logging import get_logger
from headroom.platform.settings import Settings

log = get_logger("headroom.clusters.jobs")


def ingest_demo_clusters(database_url: str, settings: Settings, now: dt.datetime, **_: Any) -> dict[str, Any]:
    """Bring every demo cluster up to `now` (a no-op when HEADROOM_DEMO_FLEET is off)."""
    if not settings.demo_fleet:
        return {"clusters": 0, "points": 0}
    from headroom.clusters import demo

    points = clusters = 0
    with session_scope(database_url) as db:
        for cluster in demo.demo_clusters(db):
            result = demo.ingest_demo(db, cluster, now=now)
            points += result["points"]
            clusters += 1
    log.info("demo.ingested", clusters=clusters, points=points)
    return {"clusters": clusters, "points": points}


JOBS = (
    Job(
        name="demo.ingest",
        queue="ingest",
        schedule=Schedule(minute="*", expires_seconds=55),
        run=ingest_demo_clusters,
        description="Simulate the demo fleet up to now and store it like collected data.",
    ),
)
