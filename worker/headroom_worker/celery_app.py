"""The Celery application: Redis broker, late acks, one task at a time per process, separate queues."""

from __future__ import annotations

import logging
import os
from typing import Any

import structlog
from celery import Celery, signals
from headroom.jobs import all_jobs
from headroom.platform.jobs.registry import QUEUES
from headroom.platform.logging import configure_logging, settings_secret_values
from headroom.platform.settings import get_settings
from kombu import Queue  # type: ignore[attr-defined]  # kombu re-exports it without __all__


def _broker_url() -> str:
    url = os.environ.get("REDIS_URL")
    if not url:
        raise RuntimeError("REDIS_URL is required to run Celery workers (without it, `headroom up` runs jobs in-process)")
    return url


def _setup_logging(loglevel: Any = None, **_: Any) -> None:
    """Celery's and our tasks' log lines go through Headroom's handler (one format, secrets scrubbed: a broker
    URL's password, tokens in an exception message) instead of Celery's own root-logger setup."""
    settings = get_settings()
    level = logging.getLevelName(loglevel) if isinstance(loglevel, int) else (loglevel or settings.log_level)
    configure_logging(str(level), settings.log_json, secrets=settings_secret_values(settings))


signals.setup_logging.connect(_setup_logging, weak=False)


def _bind_task_id(task_id: str | None = None, task: Any = None, **_: Any) -> None:
    """Every log line of a task, Celery's own "succeeded" and "raised" lines included, carries its job id."""
    structlog.contextvars.bind_contextvars(job_id=task_id, job=getattr(task, "name", None))


def _unbind_task_id(**_: Any) -> None:
    structlog.contextvars.unbind_contextvars("job_id", "job")


signals.task_prerun.connect(_bind_task_id, weak=False)
signals.task_postrun.connect(_unbind_task_id, weak=False)


def _warm_up(**_: Any) -> None:
    """Load the weekly email's chart library in the worker's main process, before its pool forks: every child
    then starts with it (the first preview or send a child renders otherwise pays 2 s of CPU, more on a busy
    machine, for the import and the first figure)."""
    from headroom.digest.service import warm_up

    warm_up()


signals.worker_init.connect(_warm_up, weak=False)


app = Celery("headroom")
app.conf.update(
    broker_url=_broker_url(),
    result_backend=_broker_url(),
    result_expires=3600,
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    timezone="UTC",
    enable_utc=True,
    # A task is acknowledged only after it finished; a killed worker's task goes back to the queue and runs
    # again, which is safe because every write is idempotent (natural keys + ON CONFLICT).
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_time_limit=30 * 60,
    task_soft_time_limit=25 * 60,
    # Redis redelivers unacked tasks after the visibility timeout; it must exceed the longest task.
    broker_transport_options={"visibility_timeout": 60 * 60},
    broker_connection_retry_on_startup=True,
    task_default_queue="maintenance",
    task_queues=[Queue(name) for name in QUEUES],  # type: ignore[no-untyped-call]
    task_routes={job.name: {"queue": job.queue} for job in all_jobs()} | {"system.ping": {"queue": "maintenance"}},
    worker_send_task_events=False,
    imports=("headroom_worker.tasks",),
)

from headroom_worker.beat import beat_schedule  # noqa: E402

app.conf.beat_schedule = beat_schedule()
