"""The Celery application: Redis broker, late acks, one task at a time per process, separate queues."""

from __future__ import annotations

import os

from celery import Celery
from headroom.jobs.registry import QUEUES, all_jobs
from kombu import Queue


def _broker_url() -> str:
    url = os.environ.get("REDIS_URL")
    if not url:
        raise RuntimeError("REDIS_URL is required to run Celery workers (without it, `headroom up` runs jobs in-process)")
    return url


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
    task_queues=[Queue(name) for name in QUEUES],
    task_routes={job.name: {"queue": job.queue} for job in all_jobs()} | {"system.ping": {"queue": "maintenance"}},
    worker_send_task_events=False,
    imports=("headroom_worker.tasks",),
)

from headroom_worker.beat import beat_schedule  # noqa: E402

app.conf.beat_schedule = beat_schedule()
