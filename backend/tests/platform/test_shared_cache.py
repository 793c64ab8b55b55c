"""The cache every process of an installation shares (headroom.platform.shared_cache), on the test Redis and in
memory: a value stored by one client is read by another, a concurrent miss makes the value once, a value that is
not fresh is made again (never served), entries expire and oversized ones are not stored, a Redis that is down
costs a caller the value made without the cache, not an error."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pytest
from headroom.platform import shared_cache as sc


@pytest.fixture(params=["redis", "memory"])
def cache(request: Any, settings: Any) -> Any:
    return sc.RedisCache(settings.redis_url) if request.param == "redis" else sc.MemoryCache()


def test_a_concurrent_miss_makes_the_value_once(cache: Any) -> None:
    key = f"test:{uuid.uuid4()}"
    made: list[int] = []
    start = threading.Barrier(4)
    answers: list[bytes] = []

    def make() -> bytes:
        made.append(1)
        time.sleep(0.3)  # long enough for every other caller to arrive while it is made
        return b"rendered once"

    def ask() -> None:
        start.wait()
        answers.append(cache.get_or_make(key, make, ttl_seconds=60))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 1
    assert answers == [b"rendered once"] * 4


def test_a_value_that_is_not_fresh_is_made_again_and_replaces_it(cache: Any) -> None:
    key = f"test:{uuid.uuid4()}"
    assert cache.get_or_make(key, lambda: b"v1|old", ttl_seconds=60) == b"v1|old"
    # the stored value is of another version: never served, made again
    assert cache.get_or_make(key, lambda: b"v2|new", ttl_seconds=60, fresh=lambda v: v.startswith(b"v2|")) \
        == b"v2|new"
    assert cache.get(key) == b"v2|new"


def test_another_client_of_the_same_redis_reads_what_one_stored(settings: Any) -> None:
    key = f"test:{uuid.uuid4()}"
    assert sc.RedisCache(settings.redis_url).put(key, b"shared", ttl_seconds=60)
    made: list[int] = []
    other = sc.RedisCache(settings.redis_url)
    assert other.get_or_make(key, lambda: made.append(1) or b"not this", ttl_seconds=60) == b"shared"
    assert made == []


def test_entries_expire_and_oversized_values_are_not_stored(cache: Any) -> None:
    key = f"test:{uuid.uuid4()}"
    assert cache.put(key, b"brief", ttl_seconds=0.2)
    assert cache.get(key) == b"brief"
    time.sleep(0.3)
    assert cache.get(key) is None
    big = f"test:{uuid.uuid4()}"
    assert not cache.put(big, b"x" * (sc.MAX_VALUE_BYTES + 1), ttl_seconds=60)
    assert cache.get(big) is None


def test_the_memory_cache_keeps_its_newest_entries_only() -> None:
    cache = sc.MemoryCache(entries=2)
    for name in ("a", "b", "c"):
        cache.put(name, name.encode(), ttl_seconds=60)
    assert [cache.get(n) for n in ("a", "b", "c")] == [None, b"b", b"c"]


@pytest.fixture(params=["refused", "never_answers"])
def down(request: Any) -> Any:
    from dead_redis import dead_redis_url

    yield from dead_redis_url(request.param)


def test_a_redis_that_is_down_costs_the_value_made_without_the_cache(down: str) -> None:
    cache = sc.RedisCache(down)
    started = time.perf_counter()
    assert cache.get_or_make("test:down", lambda: b"made anyway", ttl_seconds=60) == b"made anyway"
    assert cache.get("test:down") is None
    assert time.perf_counter() - started < 4 * sc.TIMEOUT_SECONDS
