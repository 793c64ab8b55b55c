"""What a job hands the service it calls: the settings, units of work, the queue, and how to wait.

A job is a few lines (ids in, call the service); the service takes a JobContext instead of opening its own
sessions or importing the dispatcher, so a test passes one whose units of work run inside its transaction and
whose queue records what was queued (dependencies injected, nothing patched)."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from headroom.platform.db import session_scope
from headroom.platform.jobs import dispatch
from headroom.platform.jobs.registry import job as find_job
from headroom.platform.logging import get_logger
from headroom.platform.settings import Settings

log = get_logger("headroom.platform.jobs.context")


@dataclass(frozen=True)
class JobContext:
    settings: Settings
    # The database URL queued jobs connect to, and session-level advisory locks that must outlive a unit of work.
    database_url: str
    # One unit of work: a session committed when the block ends without an error, rolled back otherwise.
    units: Callable[[], AbstractContextManager[Session]]
    # Queue job `name` with primitive params (headroom.platform.jobs.dispatch.enqueue); returns the task id.
    queue: Callable[..., str]
    # Waits between retries of an outbound call (headroom.platform.retry); tests pass one that returns at once.
    sleep: Callable[[float], None] = time.sleep
    # Queue a whole round, several items per message, once per (job, now)
    # (headroom.platform.jobs.dispatch.enqueue_round): (name, key, items, now_iso, expires_seconds) ->
    # (items queued, items already queued, messages). None: one `queue` call per item.
    queue_round: Callable[[str, str, list[str], str, float | None], tuple[int, int, int]] | None = None

    def unit(self) -> AbstractContextManager[Session]:
        """Open one unit of work."""
        return self.units()

    def enqueue(self, name: str, **params: Any) -> str:
        """Queue job `name` with primitive params."""
        return self.queue(name, **params)

    @property
    def distributed(self) -> bool:
        """Whether queued jobs go to Celery workers over Redis (REDIS_URL), rather than the in-process runtime."""
        return bool(self.settings.redis_url)

    def fan_out(self, name: str, key: str, ids: Iterable[object], now: dt.datetime) -> dict[str, Any] | None:
        """Queue one run of job `name` per id (`key`=id), when jobs go to Celery; None when they run in-process.

        This is how the work scales out (docs/scaling.md): a scheduled run over every cluster or source becomes
        messages on the job's queue, which any number of worker processes share, so the items run in parallel.
        Each item runs for the scheduled `now` (one window for the whole round) and expires as the scheduled run
        does, so a backlog is dropped, not run late.

        With `queue_round` (the real queue) a big round is published several items per message (up to the
        schedule's `chunk_items`), each item still run, counted, retried and expired on its own, and the round
        is queued once: running it again for the same `now` queues nothing twice; the summary then says how
        many were `already_queued`."""
        if not self.distributed:
            return None
        schedule = find_job(name).schedule
        expires = schedule.expires_seconds if schedule is not None else None
        already = 0
        if self.queue_round is not None:
            queued, already, messages = self.queue_round(name, key, [str(item) for item in ids], now.isoformat(),
                                                         expires)
        else:
            queued = messages = 0
            for item in ids:
                self.enqueue(name, now_iso=now.isoformat(), expires_seconds=expires, **{key: str(item)})
                queued += 1
                messages += 1
        log.info("job.fanned_out", job=name, queued=queued, already_queued=already, messages=messages)
        return {"fanned_out": True, "queued": queued, "messages": messages} | (
            {"already_queued": already} if already else {})


def job_context(database_url: str, settings: Settings) -> JobContext:
    """The context of a job run by Celery or the in-process runtime: real sessions, the real queue."""

    def queue(name: str, **params: Any) -> str:
        return dispatch.enqueue(name, settings, database_url, **params)

    def queue_round(name: str, key: str, items: list[str], now_iso: str,
                    expires_seconds: float | None) -> tuple[int, int, int]:
        return dispatch.enqueue_round(name, settings, key, items, now_iso, expires_seconds)

    return JobContext(settings=settings, database_url=database_url, units=lambda: session_scope(database_url),
                      queue=queue, queue_round=queue_round if settings.redis_url else None)
