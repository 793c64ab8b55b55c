"""Celery tasks: one per job in headroom's table (each loads settings, calls the job, returns its summary), and
jobs.run_chunk, which runs the items of one message of a scheduled round, each as its job's own task would."""

from __future__ import annotations

import datetime as dt
import socket
from collections.abc import Callable
from typing import Any

import psycopg
import redis
import sqlalchemy.exc
from celery import Task, signals
from celery.utils.time import get_exponential_backoff_interval
from headroom.domain.catalog.instance_types import use_override_file
from headroom.jobs import all_jobs
from headroom.platform import telemetry
from headroom.platform.jobs import rounds
from headroom.platform.jobs.dispatch import CHUNK_TASK, round_task_id
from headroom.platform.jobs.registry import Job
from headroom.platform.jobs.registry import job as find_job
from headroom.platform.jobs.runner import run_job
from headroom.platform.logging import get_logger
from headroom.platform.settings import Settings, get_settings

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


log = get_logger("headroom_worker.tasks")


def _settings() -> tuple[Settings, str]:
    settings = get_settings()
    use_override_file(settings.instance_catalog)  # the catalog's configuration comes from the settings
    if not settings.database_url:
        raise RuntimeError("DATABASE_URL is required for Celery workers")
    return settings, settings.database_url


def _make_task(job: Job) -> Task:
    def run(self: Task, now_iso: str | None = None, **params: Any) -> dict[str, Any]:
        settings, database_url = _settings()
        now = dt.datetime.fromisoformat(now_iso) if now_iso else dt.datetime.now(dt.UTC)
        return run_job(job, database_url, settings, now, job_id=self.request.id, **params)

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


def retry_alone(job: Job, key: str, now_iso: str, expires_at: dt.datetime | None) -> Callable[[str], None]:
    """Queue one item of a round again as its job's own task (`key`=item), as Celery's automatic retry of that
    task would: its backoff for the first retry, counted as retry 1 (the task's retry policy goes on from there),
    the item's id as task id, and the round's expiry."""
    task = TASKS[job.name]

    def queue(item: str) -> None:
        countdown = get_exponential_backoff_interval(factor=int(max(1.0, task.retry_backoff)), retries=0,
                                                     maximum=task.retry_backoff_max, full_jitter=task.retry_jitter)
        task.apply_async(kwargs={key: item, "now_iso": now_iso}, task_id=round_task_id(job.name, now_iso, item),
                         countdown=countdown, expires=expires_at, retries=1, queue=job.queue)

    return queue


@app.task(name=CHUNK_TASK, bind=True)  # type: ignore[untyped-decorator]
def run_chunk(self: Task, job: str, key: str, items: list[str], now_iso: str,
              expires_at: str | None = None) -> dict[str, Any]:
    """Run the items of one message of a fanned-out round, each as its job's own task would (rounds.run_chunk)."""
    settings, database_url = _settings()
    entry = find_job(job)
    expires = dt.datetime.fromisoformat(expires_at) if expires_at else None
    return rounds.run_chunk(entry, key, items, dt.datetime.fromisoformat(now_iso), expires, database_url, settings,
                            retryable=TRANSIENT_ERRORS, retry_alone=retry_alone(entry, key, now_iso, expires))


def _count_expired(sender: Any = None, request: Any = None, expired: bool = False, **_: Any) -> None:
    """A message Celery dropped unread because it expired counts as its runs expired: every item of a round's
    message (named in its headers), or the one run of a job's own task."""
    if not expired:
        return
    job, count = getattr(request, "round_job", None), getattr(request, "round_items", None)
    if job is None:
        job, count = getattr(sender, "name", None), 1
    if job in TASKS and isinstance(count, int):
        telemetry.record_jobs_expired(telemetry.job_stats(get_settings().redis_url), job, count)
        log.warning("job.expired", job=job, items=count, task_id=getattr(request, "id", None))


signals.task_revoked.connect(_count_expired, weak=False)


@app.task(name="system.ping")  # type: ignore[untyped-decorator]
def ping() -> dict[str, str]:
    """Answer with the worker's host name (used by health checks and tests)."""
    return {"pong": socket.gethostname()}
