"""One message of a round (headroom.platform.jobs.rounds.run_chunk): its items run one after another, each as its
own run of the job, counted in the deployment's job stats on a real Redis; a failing item does not stop the
others, a transiently failing one is handed back to be queued alone, and items not started by the round's
expiry are dropped and counted as expired. The worker's end of it (a real Celery worker) is in worker/tests."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
import structlog
from headroom.platform.jobs.dispatch import round_task_id
from headroom.platform.jobs.registry import Job
from headroom.platform.jobs.rounds import run_chunk
from headroom.platform.settings import Settings
from headroom.platform.telemetry import RedisJobStats
from xdist_workers import redis_db

NOW = dt.datetime(2026, 3, 2, 10, 15, tzinfo=dt.UTC)
NAME = "test.round_item"


class Transient(Exception):
    """Stands for the errors the worker retries (a database or broker briefly unreachable)."""


@pytest.fixture()
def settings(redis_url: str) -> Iterator[Settings]:
    """Settings whose job stats are a Redis database of their own, emptied before and after."""
    url = redis_db(redis_url, 9)
    client = redis.Redis.from_url(url)
    client.flushdb()
    yield Settings(HEADROOM_ENV="test", HEADROOM_SECRET_KEY="test-secret-key-" + "x" * 32, REDIS_URL=url)
    client.flushdb()


def _job(ran: list[tuple[str, str | None]], fail: dict[str, type[Exception]] | None = None) -> Job:
    """A job whose run records (item, its log job id) and raises the error given for an item."""

    def run(_url: str, _settings: Settings, now: dt.datetime, cluster_id: str, **params: Any) -> dict[str, Any]:
        assert now == NOW and not params  # the round's minute; nothing but the item
        ran.append((cluster_id, structlog.contextvars.get_contextvars().get("job_id")))
        if fail and cluster_id in fail:
            raise fail[cluster_id](cluster_id)
        return {"clusters": 1}

    return Job(name=NAME, queue="advice", schedule=None, run=run, description="a round's item")


def _runs(settings: Settings) -> dict[str, int]:
    assert settings.redis_url
    totals = RedisJobStats(settings.redis_url).read()
    return {outcome: count for (job, outcome), count in totals.runs.items() if job == NAME}


def _never_retried(item: str) -> None:
    raise AssertionError(f"{item} was retried")


def test_every_item_runs_once_in_order_as_a_run_of_its_own(settings: Settings) -> None:
    ran: list[tuple[str, str | None]] = []
    items = [f"c{i}" for i in range(7)]
    summary = run_chunk(_job(ran), "cluster_id", items, NOW, NOW + dt.timedelta(days=3650), "unused://", settings,
                        retryable=(Transient,), retry_alone=_never_retried)
    assert summary == {"job": NAME, "items": 7, "succeeded": 7, "failed": 0, "retried": 0, "expired": 0}
    # each item's log lines carry its own id in the round, the id its retry would run under
    assert ran == [(item, round_task_id(NAME, NOW.isoformat(), item)) for item in items]
    totals = RedisJobStats(settings.redis_url or "").read()
    assert _runs(settings) == {"succeeded": 7}  # what /metrics and the load test read: one run per item
    assert sum(totals.buckets[NAME]) == 7


def test_a_failing_item_does_not_stop_its_chunk_and_a_transient_one_is_retried_alone(settings: Settings) -> None:
    ran: list[tuple[str, str | None]] = []
    retried: list[str] = []
    items = ["a", "bad", "b", "flaky", "c"]
    job = _job(ran, fail={"bad": ValueError, "flaky": Transient})
    summary = run_chunk(job, "cluster_id", items, NOW, None, "unused://", settings, retryable=(Transient,),
                        retry_alone=retried.append)
    assert summary == {"job": NAME, "items": 5, "succeeded": 3, "failed": 2, "retried": 1, "expired": 0}
    assert [item for item, _ in ran] == items
    assert retried == ["flaky"]  # only the transient failure, and only that item
    assert _runs(settings) == {"succeeded": 3, "failed": 2}


def test_an_item_whose_retry_cannot_be_queued_leaves_the_others_running(settings: Settings) -> None:
    ran: list[tuple[str, str | None]] = []

    def queue_down(item: str) -> None:
        raise redis.ConnectionError("broker unreachable")

    summary = run_chunk(_job(ran, fail={"flaky": Transient}), "cluster_id", ["flaky", "a"], NOW, None, "unused://",
                        settings, retryable=(Transient,), retry_alone=queue_down)
    assert summary == {"job": NAME, "items": 2, "succeeded": 1, "failed": 1, "retried": 0, "expired": 0}
    assert [item for item, _ in ran] == ["flaky", "a"]


def _clock(times: list[dt.datetime]) -> Callable[[], dt.datetime]:
    readings = iter(times)
    return lambda: next(readings)


def test_items_not_started_before_the_round_expires_are_dropped_and_counted(settings: Settings) -> None:
    """A slow item makes its chunk-mates late: those that would start after the round's expiry do not run."""
    ran: list[tuple[str, str | None]] = []
    expires_at = NOW + dt.timedelta(seconds=600)
    # the clock read before each item: two start in time, the third would start a second after the expiry
    clock = _clock([NOW, NOW + dt.timedelta(seconds=30), expires_at + dt.timedelta(seconds=1)])
    summary = run_chunk(_job(ran), "cluster_id", ["a", "b", "c", "d", "e"], NOW, expires_at, "unused://", settings,
                        retryable=(Transient,), retry_alone=_never_retried, clock=clock)
    assert summary == {"job": NAME, "items": 5, "succeeded": 2, "failed": 0, "retried": 0, "expired": 3}
    assert [item for item, _ in ran] == ["a", "b"]
    assert _runs(settings) == {"succeeded": 2, "expired": 3}
    # an expired run is counted, not timed: the duration histogram holds the two that ran
    assert sum(RedisJobStats(settings.redis_url or "").read().buckets[NAME]) == 2


def test_an_item_started_exactly_at_the_expiry_is_dropped(settings: Settings) -> None:
    ran: list[tuple[str, str | None]] = []
    expires_at = NOW + dt.timedelta(seconds=55)
    summary = run_chunk(_job(ran), "cluster_id", ["a"], NOW, expires_at, "unused://", settings,
                        retryable=(Transient,), retry_alone=_never_retried, clock=_clock([expires_at]))
    assert summary["expired"] == 1 and ran == []


# Every job whose scheduled run fans out (JobContext.fan_out), with its item's parameter.
FANNED_OUT = [("advice.run", "cluster_id"), ("fleet.score", "cluster_id"), ("projections.run", "cluster_id"),
              ("demo.ingest", "cluster_id"), ("aws.ingest", "connection_id"), ("prometheus.ingest", "source_id")]


@pytest.mark.parametrize(("name", "key"), FANNED_OUT)
def test_every_fanned_out_job_runs_an_item_with_the_params_its_round_gives(name: str, key: str, database_url: str,
                                                                          settings: Settings) -> None:
    """The real job, on the test database, for an item that no longer exists (deleted since the round was
    queued): the job takes exactly the round's params (the item and the minute) and finds nothing to do."""
    import uuid

    from headroom.jobs import all_jobs
    from headroom.platform.jobs.registry import job as find_job

    all_jobs()
    summary = run_chunk(find_job(name), key, [str(uuid.uuid4())], NOW, None, database_url, settings,
                        retryable=(), retry_alone=_never_retried)
    assert summary == {"job": name, "items": 1, "succeeded": 1, "failed": 0, "retried": 0, "expired": 0}
    totals = RedisJobStats(settings.redis_url or "").read()
    assert totals.runs == {(name, "succeeded"): 1}


def test_the_fanned_out_jobs_are_the_ones_listed() -> None:
    """FANNED_OUT above names every job a service fans out (read from the services' source)."""
    import re
    from pathlib import Path

    import headroom

    root = Path(headroom.__file__).parent
    calls = {(m[0], m[1]) for path in root.rglob("*.py")
             for m in re.findall(r'fan_out\("([\w.]+)", "(\w+)"', path.read_text())}
    assert calls == set(FANNED_OUT)
