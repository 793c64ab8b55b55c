"""Enqueue a job from the API or CLI: to Celery (by task name, over Redis) when REDIS_URL is set, else on a
background thread of this process. The backend never imports the worker package: Celery routes by name."""

from __future__ import annotations

import datetime as dt
import threading
from functools import lru_cache
from typing import Any

from headroom.core.logging import get_logger
from headroom.core.settings import Settings
from headroom.jobs.registry import job as find_job

log = get_logger("headroom.jobs.dispatch")


@lru_cache(maxsize=4)
def _celery_client(redis_url: str) -> Any:
    from celery import Celery

    return Celery("headroom-client", broker=redis_url, backend=redis_url)


def enqueue(name: str, settings: Settings, database_url: str, **params: Any) -> str:
    """Queue job `name` with primitive params; return a task id (Celery) or 'inprocess:<name>'."""
    job = find_job(name)
    if settings.redis_url:
        result = _celery_client(settings.redis_url).send_task(name, kwargs=params, queue=job.queue)
        log.info("job.enqueued", job=name, queue=job.queue, task_id=result.id)
        return str(result.id)

    def run() -> None:
        try:
            job.run(database_url, settings, dt.datetime.now(dt.UTC), **params)
        except Exception:  # noqa: BLE001 - reported in the log; the source's health records the failure
            log.exception("job.failed", job=name)

    threading.Thread(target=run, name=f"job-{name}", daemon=True).start()
    return f"inprocess:{name}"
