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
        ids = rotated(list(ids), now)
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


# The golden ratio's fractional part: the starts of successive rounds (m x this, modulo 1) spread evenly over the
# list whatever its length (Weyl's equidistribution; the same low-discrepancy step as Fibonacci hashing).
_START_STEP = 0.6180339887498949


def rotated(items: list[Any], now: dt.datetime) -> list[Any]:
    """The round's items, starting at a place that moves with the round's minute.

    A round that does not fit in its expiry drops the items queued last. In one fixed order the same items would be
    dropped every round (a load test of 1,000 demo clusters on 2 cores left 199 of them without data for 45
    minutes, docs/scaling.md); with the start moving by the golden ratio's step each minute every item is near
    the front about as often as any other, so an overloaded round delays every cluster a little instead of some
    for ever. The order is the same for the same minute, so a round queued again is the same round."""
    if len(items) < 2:
        return items
    minute = int(now.timestamp()) // 60
    start = int((minute * _START_STEP) % 1.0 * len(items))
    return items[start:] + items[:start]


def job_context(database_url: str, settings: Settings) -> JobContext:
    """The context of a job run by Celery or the in-process runtime: real sessions, the real queue."""

    def queue(name: str, **params: Any) -> str:
        return dispatch.enqueue(name, settings, database_url, **params)

    def queue_round(name: str, key: str, items: list[str], now_iso: str,
                    expires_seconds: float | None) -> tuple[int, int, int]:
        return dispatch.enqueue_round(name, settings, key, items, now_iso, expires_seconds)

    return JobContext(settings=settings, database_url=database_url, units=lambda: session_scope(database_url),
                      queue=queue, queue_round=queue_round if settings.redis_url else None)
