"""The table of background jobs: name (Celery task name `domain.verb`), queue, schedule and the function.

Each feature's `jobs` module declares its own `JOBS` tuple; `headroom.jobs.JOB_MODULES` lists those modules
(an explicit list: a new feature adds its module there)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

QUEUES = ("ingest", "advice", "email", "maintenance")


@dataclass(frozen=True)
class Schedule:
    """A cron-like schedule: minute and hour fields as Celery's crontab takes them ("*", "*/5", "7")."""

    minute: str = "*"
    hour: str = "*"
    day_of_week: str = "*"
    # Seconds after which a queued run is dropped rather than run late (Celery `expires`).
    expires_seconds: int = 300


@dataclass(frozen=True)
class Job:
    name: str
    queue: str
    schedule: Schedule | None
    # run(database_url, settings, now, **params) -> a JSON-able summary. Params are ids and primitives only.
    run: Callable[..., dict[str, Any]]
    description: str


def _collect() -> tuple[Job, ...]:
    """Collect `JOBS` from every module `headroom.jobs.JOB_MODULES` names.

    The modules are imported here, when the table is first read, not when this module is: a feature's service
    enqueues jobs through `dispatch`, which reads this table, and the feature's jobs module imports that service.
    """
    import importlib

    from headroom.jobs import JOB_MODULES

    found: list[Job] = []
    for name in JOB_MODULES:
        found.extend(importlib.import_module(name).JOBS)
    names = [j.name for j in found]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise RuntimeError(f"duplicate job names: {sorted(duplicates)}")
    return tuple(found)


def all_jobs() -> tuple[Job, ...]:
    """Every job, collected once per process."""
    global _JOBS
    if _JOBS is None:
        _JOBS = _collect()
    return _JOBS


_JOBS: tuple[Job, ...] | None = None


def job(name: str) -> Job:
    for entry in all_jobs():
        if entry.name == name:
            return entry
    raise KeyError(name)
