"""Prometheus ingest jobs: the per-minute incremental pull (+ status-port config polling) and the backfill.
Ids in, the service (headroom.sources.prometheus.service) does the rest."""

from __future__ import annotations

import datetime as dt
from typing import Any

from headroom.platform.jobs.context import job_context
from headroom.platform.jobs.registry import Job, Schedule
from headroom.platform.settings import Settings
from headroom.sources.prometheus import service


def ingest_prometheus(
    database_url: str, settings: Settings, now: dt.datetime, source_id: str | None = None
) -> dict[str, Any]:
    """Pull every attached Prometheus source (or one) since its watermarks; queue a backfill for new sources."""
    return service.ingest_sources(job_context(database_url, settings), now, source_id)


def backfill_prometheus(
    database_url: str, settings: Settings, now: dt.datetime, source_id: str | None = None
) -> dict[str, Any]:
    """Import a source's history (14 days by default), committing progress after each chunk."""
    return service.backfill(job_context(database_url, settings), now, source_id)


JOBS: tuple[Job, ...] = (
    Job(
        name="prometheus.ingest",
        queue="ingest",
        # a pull waits on the tenant's Prometheus (20 s per request at most): few per message, so one slow
        # server delays few others
        schedule=Schedule(minute="*", expires_seconds=55, chunk_items=10),
        run=ingest_prometheus,
        collects=True,
        description="Pull the last minutes of TiKV and node_exporter series from every Prometheus source.",
    ),
    Job(
        name="prometheus.backfill",
        queue="ingest",
        schedule=None,
        run=backfill_prometheus,
        collects=True,
        description="Import a Prometheus source's history (14 days by default) with progress.",
    ),
)
