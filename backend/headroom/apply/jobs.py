"""Apply jobs (docs/apply.md "Running a plan"): `apply.advance` moves one plan as far as it can go now (queued when
a run starts, a stop is asked or an undo is confirmed); `apply.tick` every minute advances every running plan
(each step's watch ends on a later tick) and every confirmed volume undo. Both are idempotent: the run's state is
in the database, a step in progress is locked, and a done step is never repeated."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from headroom.apply import run
from headroom.platform.jobs.context import job_context
from headroom.platform.jobs.registry import Job, Schedule
from headroom.platform.settings import Settings


def _clock() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def run_advance(database_url: str, settings: Settings, now: dt.datetime, *, plan_id: str | None = None,
                **_: Any) -> dict[str, Any]:
    """Advance one plan; without a plan (the in-process scheduler's start-up round runs every job once), every
    running plan, as the minute's tick does."""
    if plan_id is None:
        return run.advance_all(job_context(database_url, settings), clock=_clock)
    return run.advance(job_context(database_url, settings), uuid.UUID(plan_id), clock=_clock)


def run_tick(database_url: str, settings: Settings, now: dt.datetime, **_: Any) -> dict[str, Any]:
    """Advance every running plan and every confirmed volume undo."""
    return run.advance_all(job_context(database_url, settings), clock=_clock)


JOBS = (
    Job(name="apply.advance", queue="maintenance", schedule=None, run=run_advance,
        description="Advance one apply plan: start, verify, watch and judge its next step, roll back on a tripped "
                    "guard, settle a stop, carry out a confirmed volume undo."),
    Job(name="apply.tick", queue="maintenance", schedule=Schedule(minute="*", expires_seconds=55), run=run_tick,
        description="Advance every running apply plan (a step's watch ends on a later minute) and every "
                    "confirmed volume undo."),
)
