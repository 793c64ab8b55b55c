"""AWS ingest jobs: the per-minute incremental CloudWatch pull (+ inventory every 15 minutes) and the backfill.
Ids in, the service (headroom.sources.aws.service) does the rest."""

from __future__ import annotations

import datetime as dt
from typing import Any

from headroom.platform.jobs.context import job_context
from headroom.platform.jobs.registry import Job, Schedule
from headroom.platform.settings import Settings
from headroom.sources.aws import service


def ingest_aws(database_url: str, settings: Settings, now: dt.datetime, connection_id: str | None = None,
               force_inventory: bool = False) -> dict[str, Any]:
    """Sweep every AWS connection (or one): inventory when due, then CloudWatch since the watermarks."""
    return service.ingest_connections(job_context(database_url, settings), now, connection_id, force_inventory)


def backfill_aws(database_url: str, settings: Settings, now: dt.datetime, connection_id: str | None = None,
                 days: int | None = None) -> dict[str, Any]:
    """Import a connection's CloudWatch history (14 days by default), committing progress after each request."""
    return service.backfill(job_context(database_url, settings), now, connection_id, days)


JOBS: tuple[Job, ...] = (
    Job(
        name="aws.ingest",
        queue="ingest",
        # a pull waits on the tenant's AWS account: few per message, so one slow account delays few others
        schedule=Schedule(minute="*", expires_seconds=55, chunk_items=10),
        run=ingest_aws,
        collects=True,
        description="Pull CloudWatch EBS/EC2 series of every AWS connection since its watermarks; inventory.",
    ),
    Job(
        name="aws.backfill",
        queue="ingest",
        schedule=None,
        run=backfill_aws,
        collects=True,
        description="Import an AWS connection's CloudWatch history (14 days by default) with progress.",
    ),
)
