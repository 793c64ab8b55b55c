"""Celery tasks: one per job in headroom's table; each loads settings, calls the job, returns its summary."""

from __future__ import annotations

import datetime as dt
import socket
from typing import Any

import psycopg
import redis
import sqlalchemy.exc
from celery import Task
from headroom.domain.catalog.instance_types import use_override_file
from headroom.jobs import all_jobs
from headroom.platform.jobs.registry import Job
from headroom.platform.jobs.runner import run_job
from headroom.platform.settings import get_settings

from headroom_worker.celery_app import app

# Only these are worth a retry: the database or broker was briefly unreachable. Bad data or bugs are not.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    sqlalchemy.exc.OperationalError,
    sqlalchemy.exc.InterfaceError,
    psycopg.OperationalError,
    redis.ConnectionError,
    redis.TimeoutError,
    ConnectionError,
    TimeoutError,
)


def _make_task(job: Job) -> Task:
    def run(self: Task, now_iso: str | None = None, **params: Any) -> dict[str, Any]:
        settings = get_settings()
        use_override_file(settings.instance_catalog)  # the catalog's configuration comes from the settings
        if not settings.database_url:
            raise RuntimeError("DATABASE_URL is required for Celery workers")
        now = dt.datetime.fromisoformat(now_iso) if now_iso else dt.datetime.now(dt.UTC)
        return run_job(job, settings.database_url, settings, now, job_id=self.request.id, **params)

    run.__name__ = job.name.replace(".", "_")
    run.__doc__ = job.description
    return app.task(
        name=job.name,
        bind=True,
        autoretry_for=TRANSIENT_ERRORS,
        retry_backoff=2,
        retry_backoff_max=120,
        retry_jitter=True,
        max_retries=5,
    )(run)


TASKS: dict[str, Task] = {job.name: _make_task(job) for job in all_jobs()}


@app.task(name="system.ping")  # type: ignore[untyped-decorator]
def ping() -> dict[str, str]:
    """Answer with the worker's host name (used by health checks and tests)."""
    return {"pong": socket.gethostname()}
