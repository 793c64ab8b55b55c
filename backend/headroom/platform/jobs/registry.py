"""The table of background jobs: name (Celery task name `domain.verb`), queue, schedule and the function.

Each feature's `jobs` module declares its own `JOBS` tuple; `headroom.jobs.JOB_MODULES` lists those modules
(an explicit list: a new feature adds its module there), and `headroom.jobs.all_jobs` collects them and installs
them here, where `dispatch` looks a job up by name. Platform never imports the features' jobs: every entry point
(the server command, the worker, the tests' conftest) installs the table through `headroom.jobs`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from celery.schedules import crontab

QUEUES = ("ingest", "advice", "email", "alerts", "maintenance")


@dataclass(frozen=True)
class Schedule:
    """When a job runs, in Celery crontab fields ("*", "*/5", "7"; days of the week from Sunday = 0).

    The one schedule definition: Celery beat runs `crontab()` and the in-process runtime asks the same crontab
    whether a minute is due (`is_due`), so both runtimes read the fields with Celery's own parser."""

    minute: str = "*"
    hour: str = "*"
    day_of_week: str = "*"
    # Seconds after which a queued run is dropped rather than run late (Celery `expires`).
    expires_seconds: int = 300
    # The most items one message of the job's fanned-out round carries (headroom.platform.jobs.dispatch,
    # docs/scaling.md "How Headroom scales out"): the items of a message run one after another, so a slow item
    # delays the rest of its message.
    chunk_items: int = 50

    def crontab(self, now: Callable[[], dt.datetime] | None = None) -> crontab:
        """Return the Celery crontab of these fields (`now`: the clock it measures remaining time against)."""
        clock = {"nowfun": now} if now is not None else {}
        return crontab(minute=self.minute, hour=self.hour, day_of_week=self.day_of_week, **clock)

    def is_due(self, at: dt.datetime) -> bool:
        """Whether the schedule fires in the minute `at` falls in (UTC): the crontab's next run after the
        previous minute is this minute."""
        minute = at.astimezone(dt.UTC).replace(second=0, microsecond=0)
        remaining: dt.timedelta = self.crontab(now=lambda: minute).remaining_estimate(minute - dt.timedelta(minutes=1))
        return remaining <= dt.timedelta(0)


@dataclass(frozen=True)
class Job:
    name: str
    queue: str
    schedule: Schedule | None
    # run(database_url, settings, now, **params) -> a JSON-able summary. Params are ids and primitives only.
    run: Callable[..., dict[str, Any]]
    description: str
    # It brings data in (a collector, a backfill): the in-process start-up round runs these before the jobs that
    # read their data (headroom.platform.jobs.runtime.catch_up_order).
    collects: bool = False


_TABLE: dict[str, Job] = {}


def install(jobs: Iterable[Job]) -> None:
    """Make `jobs` the table `job` reads (replacing any installed before)."""
    table = {entry.name: entry for entry in jobs}
    _TABLE.clear()
    _TABLE.update(table)


def job(name: str) -> Job:
    """The installed job called `name` (KeyError when there is none, or no table was installed)."""
    if not _TABLE:
        raise KeyError(f"{name}: no job table installed (call headroom.jobs.all_jobs() at the entry point)")
    return _TABLE[name]
