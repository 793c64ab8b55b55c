"""The table of background jobs: name (Celery task name `domain.verb`), queue, schedule and the function.

Each module of headroom.jobs (other than this one and `runtime`) declares its own `JOBS` tuple; adding a job
never edits this file."""

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


def _discover() -> tuple[Job, ...]:
    """Collect `JOBS` from every module of the headroom.jobs package (one module per domain)."""
    import importlib
    import pkgutil

    import headroom.jobs as package

    found: list[Job] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name in {"registry", "runtime"} or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        found.extend(getattr(module, "JOBS", ()))
    names = [j.name for j in found]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise RuntimeError(f"duplicate job names: {sorted(duplicates)}")
    return tuple(found)


def all_jobs() -> tuple[Job, ...]:
    """Every job, discovered once per process."""
    global _JOBS
    if _JOBS is None:
        _JOBS = _discover()
    return _JOBS


_JOBS: tuple[Job, ...] | None = None


def job(name: str) -> Job:
    for entry in all_jobs():
        if entry.name == name:
            return entry
    raise KeyError(name)
