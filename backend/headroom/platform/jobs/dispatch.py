"""Enqueue a job from the API or CLI: to Celery (by task name, over Redis) when REDIS_URL is set, else on the
process's small thread pools (one per queue). The backend never imports the worker package: Celery routes by name.

Publishing is bounded (docs/advise-limits.md): an unreachable or unresponsive Redis fails within a few seconds
with QueueUnavailable (a 503 in the API) instead of Celery's default of retrying the broker, and waiting on the
result backend, for tens of seconds or for ever. The client has no result backend: nothing here reads results.
"""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from headroom.platform.errors import QueueUnavailable
from headroom.platform.jobs.registry import job as find_job
from headroom.platform.jobs.runner import run_job
from headroom.platform.logging import get_logger
from headroom.platform.redis_client import redis_client
from headroom.platform.settings import Settings

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

log = get_logger("headroom.platform.jobs.dispatch")

# Seconds to connect to Redis, and to wait for one reply from it, when publishing a task.
PUBLISH_TIMEOUT_SECONDS = 2.0
# One quick reconnect (a pooled connection may be stale after a Redis restart), then give up.
PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5}
# Without Redis, queued jobs run on this many threads per queue of the API process, whatever the load: one pool
# per queue (as Celery's queues), so a long history import does not hold back advice.
INPROCESS_WORKERS = 2
QUEUE_UNAVAILABLE_MESSAGE = "The job queue (Redis) is unreachable; {what} was not queued. Try again shortly."
# What a 503 of a history import (backfill) route leaves recorded; the ingest jobs re-queue a stale queued import.
BACKFILL_NOT_QUEUED = ("The job queue is unreachable. The import request is saved: the next collection sweep after "
                       "the queue is back queues it, or ask again.")


@lru_cache(maxsize=4)
def _celery_client(redis_url: str) -> Any:
    from celery import Celery

    client = Celery("headroom-client", broker=redis_url)
    client.conf.update(
        broker_connection_timeout=PUBLISH_TIMEOUT_SECONDS,
        broker_connection_retry=False,
        broker_transport_options={
            "socket_connect_timeout": PUBLISH_TIMEOUT_SECONDS,
            "socket_timeout": PUBLISH_TIMEOUT_SECONDS,
        },
    )
    return client


def _publish_errors() -> tuple[type[BaseException], ...]:
    import kombu.exceptions
    import redis

    return (kombu.exceptions.OperationalError, redis.RedisError, OSError)


_pool_lock = threading.Lock()
_pools: dict[str, ThreadPoolExecutor] = {}
_pending: dict[str, int] = {}


def _inprocess_pool(queue: str) -> ThreadPoolExecutor:
    with _pool_lock:
        if queue not in _pools:
            _pools[queue] = ThreadPoolExecutor(max_workers=INPROCESS_WORKERS, thread_name_prefix=f"headroom-{queue}")
        return _pools[queue]


def inprocess_pending() -> int:
    """How many in-process jobs are queued or running (0 once the pool is idle)."""
    with _pool_lock:
        return sum(_pending.values())


def inprocess_pending_by_queue() -> dict[str, int]:
    """How many in-process jobs are queued or running, per queue (the queues used so far)."""
    with _pool_lock:
        return dict(_pending)


def _done(queue: str) -> Callable[[Future[None]], None]:
    def done(_: Future[None]) -> None:
        with _pool_lock:
            _pending[queue] -= 1

    return done


def enqueue(name: str, settings: Settings, database_url: str, *, task_id: str | None = None,
            what: str = "the job", expires_seconds: float | None = None, **params: Any) -> str:
    """Queue job `name` with primitive params; return its task id (`task_id` when given).

    `expires_seconds`: a Celery task not started by then is dropped (a fanned-out run of a per-minute job must
    not pile up behind a busy worker); the in-process runtime starts every job it is given.

    Raises QueueUnavailable when Redis cannot take the task within the publish timeout (`what` names the job in
    the message users see)."""
    job = find_job(name)
    if settings.redis_url:
        try:
            result = _celery_client(settings.redis_url).send_task(
                name, kwargs=params, queue=job.queue, task_id=task_id, retry=True, retry_policy=PUBLISH_RETRY_POLICY,
                expires=expires_seconds,
            )
        except _publish_errors() as exc:
            log.warning("job.not_queued", job=name, reason="queue unreachable", error_type=type(exc).__name__)
            raise QueueUnavailable(QUEUE_UNAVAILABLE_MESSAGE.format(what=what)) from exc
        log.info("job.enqueued", job=name, queue=job.queue, task_id=result.id)
        return str(result.id)

    def run() -> None:
        try:
            run_job(job, database_url, settings, dt.datetime.now(dt.UTC), job_id=task_id, **params)
        except Exception:  # noqa: BLE001 - reported in the log; the source's health records the failure
            log.exception("job.failed", job=name)

    pool = _inprocess_pool(job.queue)
    with _pool_lock:
        _pending[job.queue] = _pending.get(job.queue, 0) + 1
    pool.submit(run).add_done_callback(_done(job.queue))
    return task_id or f"inprocess:{name}"


# Messages buffered before one Redis pipeline runs: kombu 5.7's Producer.batch(max_size=1000), its default
# (https://docs.celeryq.dev/projects/kombu/en/stable/reference/kombu.html#kombu.Producer).
PUBLISH_BATCH_SIZE = 1000
# How long a round remembers what it queued when the job has no expiry (a scheduled job always has one).
ROUND_MARK_SECONDS = 24 * 3600
_ROUND_NAMESPACE = uuid.UUID("6f1c4e9a-2d0b-5b7e-9a43-1f5e8c2d7b10")


def _redis_client(redis_url: str) -> Any:
    return redis_client(redis_url, PUBLISH_TIMEOUT_SECONDS)


def round_task_id(name: str, now_iso: str, item: str) -> str:
    """The task id of item `item` in the round of job `name` for `now_iso`: the same id whoever queues it."""
    return str(uuid.uuid5(_ROUND_NAMESPACE, f"{name}|{now_iso}|{item}"))


def enqueue_round(name: str, settings: Settings, key: str, items: Sequence[str], now_iso: str,
                  expires_seconds: float | None) -> tuple[int, int]:
    """Queue one task of job `name` per item (params: `key`=item, now_iso, expires_seconds) over Redis; return
    (queued, already queued).

    Publishing is batched: one producer and connection for the whole round, its messages sent in Redis pipelines
    of PUBLISH_BATCH_SIZE (kombu's Producer.batch), not a connection checkout and round trip per task.

    A round is queued once: each item is marked in a Redis hash of the round (job, now) before it is published,
    and an item already marked is skipped, so a round task run again (a worker lost mid-round redelivers it:
    task_acks_late) adds no second task per item. The marks last as long as the round's tasks may wait
    (`expires_seconds`). When publishing fails, the unpublished items' marks are removed so that running the
    round again queues them (at least once: a task's writes are idempotent). Raises QueueUnavailable."""
    assert settings.redis_url
    job = find_job(name)
    marks = f"headroom:round:{name}:{now_iso}"
    try:
        client = _redis_client(settings.redis_url)
        pipe = client.pipeline(transaction=False)
        for item in items:
            pipe.hsetnx(marks, item, 1)
        pipe.expire(marks, int(expires_seconds) if expires_seconds else ROUND_MARK_SECONDS)
        claimed = pipe.execute()[:-1]
    except _publish_errors() as exc:
        log.warning("job.round_not_queued", job=name, reason="queue unreachable", error_type=type(exc).__name__)
        raise QueueUnavailable(QUEUE_UNAVAILABLE_MESSAGE.format(what=f"the {name} round")) from exc
    new = [item for item, was_new in zip(items, claimed, strict=True) if was_new]
    app = _celery_client(settings.redis_url)
    sent = 0
    try:
        with app.producer_or_acquire() as producer, producer.batch(PUBLISH_BATCH_SIZE):
            for item in new:
                kwargs = {"now_iso": now_iso, "expires_seconds": expires_seconds, key: item}
                # The queue is declared with the first message only (Celery declares it with each by default),
                # and the kwargs' log form is their repr (Celery's saferepr of them is the same for these
                # short primitives, and costs a third of a publish).
                app.send_task(name, kwargs=kwargs, queue=job.queue, task_id=round_task_id(name, now_iso, item),
                              expires=expires_seconds, producer=producer, declare=None if sent == 0 else [],
                              argsrepr="()", kwargsrepr=repr(kwargs))
                sent += 1
    except _publish_errors() + (_batch_error(),) as exc:
        # Not known to be delivered: unmark them all (a batch's delivery is uncertain), so a rerun queues them.
        try:
            if new:
                client.hdel(marks, *new)
        except _publish_errors():
            log.warning("job.round_marks_kept", job=name, items=len(new))
        log.warning("job.round_not_queued", job=name, reason="queue unreachable", error_type=type(exc).__name__,
                    built=sent, of=len(new))
        raise QueueUnavailable(QUEUE_UNAVAILABLE_MESSAGE.format(what=f"the {name} round")) from exc
    log.info("job.round_queued", job=name, queue=job.queue, queued=len(new), already_queued=len(items) - len(new))
    return len(new), len(items) - len(new)


def _batch_error() -> type[BaseException]:
    from kombu.exceptions import BatchPublishError

    return BatchPublishError


def enqueue_after_commit(db: Session, name: str, settings: Settings, database_url: str, *, what: str,
                         recorded: str, **params: Any) -> str:
    """Commit the request's work (the job reads it), then queue the job. When the queue is unreachable, the
    QueueUnavailable raised says in `details` what stays recorded (`recorded`), since that was committed."""
    db.commit()
    try:
        return enqueue(name, settings, database_url, what=what, **params)
    except QueueUnavailable as exc:
        exc.details = {"recorded": recorded}
        raise
