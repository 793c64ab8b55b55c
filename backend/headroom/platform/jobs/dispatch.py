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
# A round is split into about this many messages when it has more items (docs/scaling.md, "How Headroom scales
# out"): building one message costs Celery about 0.2 ms of CPU (bench/README.md, "Publishing a round"), so 200
# cost about 40 ms, and 200 messages are still several per worker process at 10,000 clusters (40 processes).
ROUND_MESSAGES = 200
# The task that runs one message of a round: its items one after another (headroom_worker.tasks.run_chunk).
CHUNK_TASK = "jobs.run_chunk"
# How long a round remembers what it queued when the job has no expiry (a scheduled job always has one).
ROUND_MARK_SECONDS = 24 * 3600
_ROUND_NAMESPACE = uuid.UUID("6f1c4e9a-2d0b-5b7e-9a43-1f5e8c2d7b10")


def _redis_client(redis_url: str) -> Any:
    return redis_client(redis_url, PUBLISH_TIMEOUT_SECONDS)


# Mark each item (ARGV[2:]) in the round's hash (KEYS[1]) unless it is there, keep the hash ARGV[1] seconds, and
# answer one character per item, "1" where it was new: one command and one short reply for the whole round (a
# pipeline of one HSETNX per item spent most of a 10,000-item publish packing commands and parsing replies).
_MARK_ROUND = """
local new = {}
for i = 2, #ARGV do new[i - 1] = redis.call('HSETNX', KEYS[1], ARGV[i], 1) end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return table.concat(new)
"""


def round_task_id(name: str, now_iso: str, item: str) -> str:
    """The id of item `item` in the round of job `name` for `now_iso` (its log lines' job id, and its task's id
    when it is retried on its own): the same id whoever queues it."""
    return str(uuid.uuid5(_ROUND_NAMESPACE, f"{name}|{now_iso}|{item}"))


def chunk_task_id(name: str, now_iso: str, items: Sequence[str]) -> str:
    """The task id of the message carrying `items` of the round of job `name` for `now_iso`: the same id for the
    same items, so a message queued twice shows as one id twice."""
    return str(uuid.uuid5(_ROUND_NAMESPACE, f"{name}|{now_iso}|" + ",".join(items)))


def round_chunks(items: Sequence[str], chunk_items: int) -> list[list[str]]:
    """Split a round's items into messages of equal size, in order: at most `chunk_items` each, and one item
    each while the round has no more than ROUND_MESSAGES items (a small round keeps one task per item)."""
    size = max(1, min(chunk_items, -(-len(items) // ROUND_MESSAGES)))
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


def enqueue_round(name: str, settings: Settings, key: str, items: Sequence[str], now_iso: str,
                  expires_seconds: float | None) -> tuple[int, int, int]:
    """Queue the items of a round of job `name` over Redis, several per message; return (items queued, items
    already queued, messages).

    Each message is one CHUNK_TASK on the job's queue carrying up to the schedule's `chunk_items` items
    (round_chunks); a worker runs its items one after another, each as the job run with `key`=item for the
    round's `now_iso`, each on its own (headroom.platform.jobs.rounds.run_chunk). Every message expires at the
    same time, `expires_seconds` after the round is published, and an item not started by then is dropped.
    Publishing is batched: one producer and connection for the whole round, its messages sent in Redis
    pipelines of PUBLISH_BATCH_SIZE (kombu's Producer.batch).

    A round is queued once: each item is marked in a Redis hash of the round (job, now) before it is published,
    and an item already marked is skipped, so a round task run again (a worker lost mid-round redelivers it:
    task_acks_late) adds no second run of any item. The marks last as long as the round's messages may wait
    (`expires_seconds`). When publishing fails, the unpublished items' marks are removed so that running the
    round again queues them (at least once: a job's writes are idempotent). Raises QueueUnavailable."""
    assert settings.redis_url
    job = find_job(name)
    marks = f"headroom:round:{name}:{now_iso}"
    try:
        client = _redis_client(settings.redis_url)
        claimed = client.register_script(_MARK_ROUND)(
            keys=[marks], args=[int(expires_seconds) if expires_seconds else ROUND_MARK_SECONDS, *items])
    except _publish_errors() as exc:
        log.warning("job.round_not_queued", job=name, reason="queue unreachable", error_type=type(exc).__name__)
        raise QueueUnavailable(QUEUE_UNAVAILABLE_MESSAGE.format(what=f"the {name} round")) from exc
    new = [item for item, was_new in zip(items, claimed.decode() if claimed else "", strict=True) if was_new == "1"]
    chunks = round_chunks(new, job.schedule.chunk_items if job.schedule is not None else 1)
    expires_at = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=expires_seconds)) if expires_seconds else None
    expires_iso = expires_at.isoformat() if expires_at is not None else None
    app = _celery_client(settings.redis_url)
    sent = 0
    try:
        with app.producer_or_acquire() as producer, producer.batch(PUBLISH_BATCH_SIZE):
            for chunk in chunks:
                kwargs = {"job": name, "key": key, "items": chunk, "now_iso": now_iso, "expires_at": expires_iso}
                # The queue is declared with the first message only (Celery declares it with each by default),
                # and the log form of the kwargs is short: the job and how many items (Celery's saferepr of a
                # list of 50 ids costs more than the rest of the message). The headers name the job and count
                # the items for a worker that drops the message unread once it expired.
                app.send_task(CHUNK_TASK, kwargs=kwargs, queue=job.queue, task_id=chunk_task_id(name, now_iso, chunk),
                              expires=expires_at, producer=producer, declare=None if sent == 0 else [],
                              argsrepr="()", kwargsrepr=f"{{'job': {name!r}, 'items': {len(chunk)}}}",
                              headers={"round_job": name, "round_items": len(chunk)})
                sent += 1
    except _publish_errors() + (_batch_error(),) as exc:
        # Not known to be delivered: unmark them all (a batch's delivery is uncertain), so a rerun queues them.
        try:
            if new:
                client.hdel(marks, *new)
        except _publish_errors():
            log.warning("job.round_marks_kept", job=name, items=len(new))
        log.warning("job.round_not_queued", job=name, reason="queue unreachable", error_type=type(exc).__name__,
                    built=sent, of=len(chunks))
        raise QueueUnavailable(QUEUE_UNAVAILABLE_MESSAGE.format(what=f"the {name} round")) from exc
    log.info("job.round_queued", job=name, queue=job.queue, queued=len(new), already_queued=len(items) - len(new),
             messages=len(chunks))
    return len(new), len(items) - len(new), len(chunks)


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
