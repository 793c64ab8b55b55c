"""A scheduled round (JobContext.fan_out) against a real Redis: N items publish N tasks, each exactly once, each
with the round's minute and expiry; running the round again queues nothing twice; a new round queues again."""

from __future__ import annotations

import base64
import datetime as dt
import json
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from dead_redis import dead_redis_url
from headroom.jobs import all_jobs
from headroom.platform.errors import QueueUnavailable
from headroom.platform.jobs.context import JobContext, job_context
from headroom.platform.jobs.dispatch import round_task_id
from headroom.platform.jobs.registry import job as find_job
from headroom.platform.settings import Settings
from xdist_workers import redis_db

JOB = "fleet.score"
NOW = dt.datetime(2026, 3, 2, 10, 15, tzinfo=dt.UTC)


def _settings(url: str) -> Settings:
    return Settings(HEADROOM_ENV="test", HEADROOM_SECRET_KEY="test-secret-key-" + "x" * 32, REDIS_URL=url)


@pytest.fixture()
def broker(redis_url: str) -> Iterator[tuple[JobContext, redis.Redis]]:
    """The worker's job context on a Redis database of its own (no worker reads it), emptied before and after."""
    all_jobs()
    url = redis_db(redis_url, 8)
    client = redis.Redis.from_url(url)
    client.flushdb()
    yield job_context("postgresql+psycopg://unused/unused", _settings(url)), client
    client.flushdb()


def _queued(client: redis.Redis) -> list[dict[str, Any]]:
    """Every task message on the job's queue: its headers and kwargs (Celery's message protocol 2 over Redis)."""
    out = []
    for raw in client.lrange(find_job(JOB).queue, 0, -1):
        message = json.loads(raw)
        _args, kwargs, _embed = json.loads(base64.b64decode(message["body"]))
        out.append({"headers": message["headers"], "kwargs": kwargs})
    return out


def test_a_round_of_n_items_queues_n_tasks_once_each(broker: tuple[JobContext, redis.Redis]) -> None:
    ctx, client = broker
    ids = [uuid.uuid4() for _ in range(1500)]  # more than one publishing batch (1,000)
    expires = find_job(JOB).schedule.expires_seconds  # type: ignore[union-attr]

    assert ctx.fan_out(JOB, "cluster_id", ids, NOW) == {"fanned_out": True, "queued": 1500}
    tasks = _queued(client)
    assert len(tasks) == 1500
    assert Counter(t["kwargs"]["cluster_id"] for t in tasks) == Counter(str(i) for i in ids)
    assert all(t["headers"]["task"] == JOB for t in tasks)
    assert all(t["kwargs"]["now_iso"] == NOW.isoformat() and t["kwargs"]["expires_seconds"] == expires for t in tasks)
    # each task expires as the scheduled run does (Celery's `expires` header, an absolute time)
    assert all(t["headers"]["expires"] is not None for t in tasks)
    first = dt.datetime.fromisoformat(tasks[0]["headers"]["expires"])
    assert dt.timedelta(0) < first - dt.datetime.now(dt.UTC) <= dt.timedelta(seconds=expires)
    assert {t["headers"]["id"] for t in tasks} == {round_task_id(JOB, NOW.isoformat(), str(i)) for i in ids}

    # the same round again (a round task redelivered after a lost worker): nothing queued twice
    assert ctx.fan_out(JOB, "cluster_id", ids, NOW) == {"fanned_out": True, "queued": 0, "already_queued": 1500}
    assert client.llen(find_job(JOB).queue) == 1500
    # ... and items added since are queued, once
    extra = [uuid.uuid4() for _ in range(3)]
    assert ctx.fan_out(JOB, "cluster_id", ids + extra, NOW) == {"fanned_out": True, "queued": 3,
                                                                "already_queued": 1500}
    assert client.llen(find_job(JOB).queue) == 1503
    # the round's marks last as long as its tasks may wait
    ttl = client.ttl(f"headroom:round:{JOB}:{NOW.isoformat()}")
    assert 0 < ttl <= expires

    # the next round (the next scheduled minute) queues every item again
    later = NOW + dt.timedelta(minutes=15)
    assert ctx.fan_out(JOB, "cluster_id", ids, later) == {"fanned_out": True, "queued": 1500}
    assert Counter(t["kwargs"]["now_iso"] for t in _queued(client)) == {NOW.isoformat(): 1503,
                                                                         later.isoformat(): 1500}


def test_a_round_with_redis_down_is_refused_and_queued_by_the_next_run(
        broker: tuple[JobContext, redis.Redis]) -> None:
    """Unreachable Redis: QueueUnavailable within the publish timeout; nothing is marked as queued, so the same
    round run again once Redis answers queues every item."""
    ctx, client = broker
    ids = [uuid.uuid4() for _ in range(5)]
    for url in dead_redis_url("refused"):
        down = job_context("postgresql+psycopg://unused/unused", _settings(url))
        with pytest.raises(QueueUnavailable):
            down.fan_out(JOB, "cluster_id", ids, NOW)
    assert ctx.fan_out(JOB, "cluster_id", ids, NOW) == {"fanned_out": True, "queued": 5}
    assert client.llen(find_job(JOB).queue) == 5
