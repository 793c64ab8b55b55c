"""The in-process scheduler used when there is no REDIS_URL: the same job table, on one daemon thread."""

from __future__ import annotations

import datetime as dt
import threading

from headroom.platform.jobs.registry import Schedule, all_jobs
from headroom.platform.logging import get_logger
from headroom.platform.settings import Settings

log = get_logger("headroom.platform.jobs.runtime")


def _field_matches(field: str, value: int) -> bool:
    if field == "*":
        return True
    if field.startswith("*/"):
        return value % int(field[2:]) == 0
    return value in {int(part) for part in field.split(",")}


def is_due(schedule: Schedule, at: dt.datetime) -> bool:
    """Whether a crontab-style schedule fires in the minute `at` falls in."""
    return (
        _field_matches(schedule.minute, at.minute)
        and _field_matches(schedule.hour, at.hour)
        and _field_matches(schedule.day_of_week, (at.isoweekday() % 7))
    )


def run_due_jobs(database_url: str, settings: Settings, at: dt.datetime) -> list[str]:
    ran: list[str] = []
    for job in all_jobs():
        if job.schedule is not None and is_due(job.schedule, at):
            try:
                job.run(database_url, settings, at)
                ran.append(job.name)
            except Exception:  # noqa: BLE001 - one failing job must not stop the scheduler
                log.exception("job.failed", job=job.name)
    return ran


def start_inprocess_scheduler(database_url: str, settings: Settings) -> threading.Thread:
    """Run every job once now (catch-up), then each at its schedule, on a daemon thread."""
    stop = threading.Event()

    def loop() -> None:
        now = dt.datetime.now(dt.UTC)
        for job in all_jobs():
            try:
                job.run(database_url, settings, now)
            except Exception:  # noqa: BLE001
                log.exception("job.failed", job=job.name)
        last_minute = now.replace(second=0, microsecond=0)
        while not stop.wait(5):
            minute = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
            if minute > last_minute:
                last_minute = minute
                run_due_jobs(database_url, settings, minute)

    thread = threading.Thread(target=loop, name="headroom-scheduler", daemon=True)
    thread.start()
    log.info("scheduler.started", mode="in-process", jobs=len(all_jobs()))
    return thread
