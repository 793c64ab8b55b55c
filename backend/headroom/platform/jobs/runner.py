"""Run one job: the one wrapper every runtime calls (Celery tasks, the in-process pools and scheduler).

It binds the run's job id (Celery's task id, or a fresh one) and the job's name to every log line written while
the job runs, logs its start (DEBUG) and end (INFO), and counts the run with its duration and outcome in the deployment's job
stats (headroom.platform.telemetry: Redis when there is one), which /metrics reports."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import structlog

from headroom.platform import telemetry
from headroom.platform.jobs.registry import Job
from headroom.platform.logging import get_logger
from headroom.platform.settings import Settings

log = get_logger("headroom.platform.jobs.runner")


def run_job(
    job: Job,
    database_url: str,
    settings: Settings,
    now: dt.datetime,
    *,
    job_id: str | None = None,
    **params: Any,
) -> dict[str, Any]:
    """Run `job` with `params` under the log context `job_id` (a fresh id when None); count it; return its
    summary. An error is counted and raised again (the caller decides about retries and logs it)."""
    stats = telemetry.job_stats(settings.redis_url)
    with structlog.contextvars.bound_contextvars(job_id=job_id or telemetry.new_request_id(), job=job.name):
        started = time.perf_counter()
        log.debug("job.started")
        try:
            result = job.run(database_url, settings, now, **params)
        except BaseException as exc:
            seconds = time.perf_counter() - started
            telemetry.record_job_run(stats, job.name, "failed", seconds)
            log.info("job.ended", outcome="failed", seconds=round(seconds, 3), error_type=type(exc).__name__)
            raise
        seconds = time.perf_counter() - started
        telemetry.record_job_run(stats, job.name, "succeeded", seconds)
        log.info("job.ended", outcome="succeeded", seconds=round(seconds, 3))
        return result
