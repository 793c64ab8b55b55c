"""The demo fleet's ingest job: simulate each demo cluster up to now through the same store as collectors."""

from __future__ import annotations

import datetime as dt
from typing import Any

from headroom.platform.jobs.context import job_context
from headroom.platform.jobs.registry import Job, Schedule
from headroom.platform.settings import Settings
from headroom.sources.demo import service as demo


def ingest_demo_clusters(database_url: str, settings: Settings, now: dt.datetime, cluster_id: str | None = None,
                         **_: Any) -> dict[str, Any]:
    """Bring every demo cluster (or the one given) up to `now` (a no-op when HEADROOM_DEMO_FLEET is off)."""
    return demo.ingest_demo_fleet(job_context(database_url, settings), now, cluster_id)


JOBS = (
    Job(
        name="demo.ingest",
        queue="ingest",
        # every minute: few per message, so a message's clusters are done well within the minute
        schedule=Schedule(minute="*", expires_seconds=55, chunk_items=10),
        run=ingest_demo_clusters,
        collects=True,
        description="Simulate the demo fleet up to now and store it like collected data.",
    ),
)
