"""The in-process scheduler used when there is no REDIS_URL: the same job table and the same crontabs Celery beat
runs (`Schedule.is_due` asks the crontab), on one daemon thread. The caller passes the table
(`headroom.jobs.all_jobs()`)."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Sequence

from headroom.platform.jobs.registry import Job
from headroom.platform.jobs.runner import run_job
from headroom.platform.logging import get_logger
from headroom.platform.settings import Settings

log = get_logger("headroom.platform.jobs.runtime")


def run_due_jobs(jobs: Sequence[Job], database_url: str, settings: Settings, at: dt.datetime) -> list[str]:
    ran: list[str] = []
    for job in jobs:
        if job.schedule is not None and job.schedule.is_due(at):
            try:
                run_job(job, database_url, settings, at)
                ran.append(job.name)
            except Exception:  # noqa: BLE001 - one failing job must not stop the scheduler
                log.exception("job.failed", job=job.name)
    return ran


def catch_up_order(jobs: Sequence[Job]) -> list[Job]:
    """The start-up round's order: the collectors first, so the advice and the scores that follow read the data
    they bring (otherwise each waits for its next scheduled run)."""
    return sorted(jobs, key=lambda job: not job.collects)


def start_inprocess_scheduler(jobs: Sequence[Job], database_url: str, settings: Settings) -> threading.Thread:
    """Run every job once now (catch-up), then each at its schedule, on a daemon thread."""
    stop = threading.Event()

    def loop() -> None:
        now = dt.datetime.now(dt.UTC)
        for job in catch_up_order(jobs):
            try:
                run_job(job, database_url, settings, now)
            except Exception:  # noqa: BLE001
                log.exception("job.failed", job=job.name)
        last_minute = now.replace(second=0, microsecond=0)
        while not stop.wait(5):
            minute = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
            if minute > last_minute:
                last_minute = minute
                run_due_jobs(jobs, database_url, settings, minute)

    thread = threading.Thread(target=loop, name="headroom-scheduler", daemon=True)
    thread.start()
    log.info("scheduler.started", mode="in-process", jobs=len(jobs))
    return thread
