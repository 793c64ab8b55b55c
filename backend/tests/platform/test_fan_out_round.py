"""A scheduled round (JobContext.fan_out) against a real Redis: N items publish ceil(N/K) messages that carry
every item exactly once, each with the round's minute and expiry; running the round again queues nothing twice;
a new round queues again."""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
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
from headroom.platform.jobs.dispatch import CHUNK_TASK, ROUND_MESSAGES, chunk_task_id, round_chunks
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


def _messages(client: redis.Redis, queue: str | None = None) -> list[dict[str, Any]]:
    """Every message on the job's queue: its headers and kwargs (Celery's message protocol 2 over Redis)."""
    out = []
    for raw in client.lrange(queue or find_job(JOB).queue, 0, -1):
        message = json.loads(raw)
        _args, kwargs, _embed = json.loads(base64.b64decode(message["body"]))
        out.append({"headers": message["headers"], "kwargs": kwargs})
    return out


@pytest.mark.parametrize(("items", "chunk_items", "size", "messages"), [
    (1, 50, 1, 1),
    (200, 50, 1, 200),  # up to ROUND_MESSAGES items: one per message, as many messages as before
    (201, 50, 2, 101),
    (1000, 50, 5, 200),
    (10_000, 50, 50, 200),
    (25_000, 50, 50, 500),  # past ROUND_MESSAGES x chunk_items the messages grow in number, not in size
    (10_000, 10, 10, 1000),  # the per-minute pulls' chunk_items
])
def test_a_round_is_split_into_messages_of_equal_size_in_order(items: int, chunk_items: int, size: int,
                                                                  messages: int) -> None:
    ids = [str(i) for i in range(items)]
    chunks = round_chunks(ids, chunk_items)
    assert len(chunks) == messages == math.ceil(items / size)
    assert max(len(c) for c in chunks) == size
    assert [i for c in chunks for i in c] == ids


def test_a_round_of_n_items_queues_ceil_n_over_k_messages_covering_each_item_once(
        broker: tuple[JobContext, redis.Redis]) -> None:
    ctx, client = broker
    ids = [uuid.uuid4() for _ in range(1500)]
    expires = find_job(JOB).schedule.expires_seconds  # type: ignore[union-attr]
    size = math.ceil(1500 / ROUND_MESSAGES)  # 8, under the job's chunk_items (50)

    published = dt.datetime.now(dt.UTC)
    assert ctx.fan_out(JOB, "cluster_id", ids, NOW) == {"fanned_out": True, "queued": 1500,
                                                        "messages": math.ceil(1500 / size)}
    messages = _messages(client)
    assert len(messages) == math.ceil(1500 / size) == 188
    assert Counter(item for m in messages for item in m["kwargs"]["items"]) == Counter(str(i) for i in ids)
    assert {len(m["kwargs"]["items"]) for m in messages} == {size, 1500 % size}
    assert all(m["headers"]["task"] == CHUNK_TASK for m in messages)
    assert all(m["kwargs"]["job"] == JOB and m["kwargs"]["key"] == "cluster_id" and m["kwargs"]["now_iso"] == NOW.isoformat()
               for m in messages)
    # what a worker that drops an expired message unread counts: the job and its items
    assert all(m["headers"]["round_job"] == JOB and m["headers"]["round_items"] == len(m["kwargs"]["items"])
               for m in messages)
    # every message, and every item in it, expires with the round (Celery's `expires` header, an absolute time)
    expiry = {dt.datetime.fromisoformat(m["headers"]["expires"]) for m in messages}
    assert expiry == {dt.datetime.fromisoformat(m["kwargs"]["expires_at"]) for m in messages}
    assert len(expiry) == 1
    assert dt.timedelta(seconds=expires) <= expiry.pop() - published <= dt.timedelta(seconds=expires + 5)
    # one id per message from its items: a message queued twice shows as the same id twice
    assert [m["headers"]["id"] for m in messages] == [chunk_task_id(JOB, NOW.isoformat(), m["kwargs"]["items"])
                                                      for m in messages]
    assert len({m["headers"]["id"] for m in messages}) == len(messages)

    # the same round again (a round task redelivered after a lost worker): nothing queued twice
    assert ctx.fan_out(JOB, "cluster_id", ids, NOW) == {"fanned_out": True, "queued": 0, "messages": 0,
                                                        "already_queued": 1500}
    assert client.llen(find_job(JOB).queue) == 188
    # ... and items added since are queued, once
    extra = [uuid.uuid4() for _ in range(3)]
    assert ctx.fan_out(JOB, "cluster_id", ids + extra, NOW) == {"fanned_out": True, "queued": 3, "messages": 3,
                                                                "already_queued": 1500}
    assert Counter(item for m in _messages(client) for item in m["kwargs"]["items"]) == Counter(
        str(i) for i in ids + extra)
    # the round's marks last as long as its messages may wait
    ttl = client.ttl(f"headroom:round:{JOB}:{NOW.isoformat()}")
    assert 0 < ttl <= expires

    # the next round (the next scheduled minute) queues every item again
    later = NOW + dt.timedelta(minutes=15)
    assert ctx.fan_out(JOB, "cluster_id", ids, later)["queued"] == 1500  # type: ignore[index]
    assert Counter(m["kwargs"]["now_iso"] for m in _messages(client) for _ in m["kwargs"]["items"]) == {
        NOW.isoformat(): 1503, later.isoformat(): 1500}


def test_a_round_of_10000_items_is_200_messages_of_50(broker: tuple[JobContext, redis.Redis]) -> None:
    """The fleet's size in docs/scaling.md: the 15-minute rounds carry 50 items a message, the per-minute pulls 10."""
    ctx, client = broker
    ids = [uuid.uuid4() for _ in range(10_000)]
    assert ctx.fan_out(JOB, "cluster_id", ids, NOW) == {"fanned_out": True, "queued": 10_000, "messages": 200}
    messages = _messages(client)
    assert len(messages) == 200 and {len(m["kwargs"]["items"]) for m in messages} == {50}
    assert Counter(item for m in messages for item in m["kwargs"]["items"]) == Counter(str(i) for i in ids)
    assert ctx.fan_out("aws.ingest", "connection_id", ids, NOW) == {"fanned_out": True, "queued": 10_000,
                                                                    "messages": 1000}
    assert {len(m["kwargs"]["items"]) for m in _messages(client, find_job("aws.ingest").queue)} == {10}


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
    assert ctx.fan_out(JOB, "cluster_id", ids, NOW) == {"fanned_out": True, "queued": 5, "messages": 5}
    assert client.llen(find_job(JOB).queue) == 5
