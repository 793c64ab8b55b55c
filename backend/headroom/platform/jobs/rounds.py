"""Run one message of a fanned-out round: its items one after another, each exactly as its own task would run.

A big round is published several items per message (headroom.platform.jobs.dispatch.enqueue_round) so that
publishing 10,000 items takes a fraction of a second; the worker runs a message here. Each item stays its own
unit: its own run of the job (its own transactions, its own log job id, counted in the job stats as one run of
the job), its own error (a failing item does not stop the others), its own retry (an item failing with a
transient error is queued again alone, with the job's retry policy) and its own expiry (an item not started
before the round's expiry is dropped, not run late)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

import structlog

from headroom.platform import telemetry
from headroom.platform.jobs.dispatch import round_task_id
from headroom.platform.jobs.registry import Job
from headroom.platform.jobs.runner import run_job
from headroom.platform.logging import get_logger
from headroom.platform.settings import Settings

log = get_logger("headroom.platform.jobs.rounds")


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def run_chunk(
    job: Job,
    key: str,
    items: Sequence[str],
    now: dt.datetime,
    expires_at: dt.datetime | None,
    database_url: str,
    settings: Settings,
    *,
    retryable: tuple[type[BaseException], ...],
    retry_alone: Callable[[str], None],
    clock: Callable[[], dt.datetime] = _utcnow,
) -> dict[str, Any]:
    """Run `job` with `key`=item for `now`, for each item in turn; return how many succeeded, failed, were queued
    again alone (`retry_alone(item)`, for an error in `retryable`) and expired (not started by `expires_at`)."""
    stats = telemetry.job_stats(settings.redis_url)
    now_iso = now.isoformat()
    counts = {"succeeded": 0, "failed": 0, "retried": 0, "expired": 0}
    for index, item in enumerate(items):
        if expires_at is not None and clock() >= expires_at:
            # The clock only moves on: every item left is as late as this one.
            counts["expired"] = len(items) - index
            telemetry.record_jobs_expired(stats, job.name, counts["expired"])
            log.warning("job.expired", job=job.name, items=counts["expired"], expires_at=expires_at.isoformat())
            break
        item_id = round_task_id(job.name, now_iso, item)
        with structlog.contextvars.bound_contextvars(job_id=item_id, job=job.name):
            try:
                run_job(job, database_url, settings, now, job_id=item_id, **{key: item})
            except retryable as exc:
                counts["failed"] += 1
                try:
                    retry_alone(item)
                except Exception as queue_exc:  # noqa: BLE001 - the item waits for the next round; logged
                    log.warning("job.retry_not_queued", item=item, error_type=type(exc).__name__,
                                queue_error=type(queue_exc).__name__)
                else:
                    counts["retried"] += 1
                    log.warning("job.retry_queued", item=item, error_type=type(exc).__name__)
            except Exception:  # noqa: BLE001 - one item's error must not stop the others; it is logged
                counts["failed"] += 1
                log.exception("job.failed", item=item)
            else:
                counts["succeeded"] += 1
    return {"job": job.name, "items": len(items), **counts}
