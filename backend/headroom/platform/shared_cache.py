"""A small cache of rendered bytes that every process of an installation shares: Redis when REDIS_URL is set (the
API processes and the Celery workers then read what any of them stored), else this process's memory (`headroom up`
without Redis runs its jobs in the API process, so the memory is shared by the same readers).

    cache = shared_cache(settings)
    value = cache.get_or_make(key, make, ttl_seconds=...)   # `make` runs once per key across processes

Entries are bounded in time (a TTL on every key) and in size (a value larger than MAX_VALUE_BYTES is not
stored; the memory fallback also keeps at most MEMORY_ENTRIES). A miss that two callers hit at once runs `make`
once: the first takes a lock (Redis SET NX with an expiry, the single-instance lock pattern
https://redis.io/docs/latest/develop/use/patterns/distributed-locks/, as redis-py's Lock implements it:
https://redis.readthedocs.io/en/stable/lock.html) and the others wait for it, then read what it stored. A lock
whose holder died expires after LOCK_SECONDS. A Redis that is down or slow costs a caller at most
TIMEOUT_SECONDS per call and is then skipped: the value is made without the cache, never refused.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

from headroom.platform.logging import get_logger
from headroom.platform.redis_client import redis_client

log = get_logger("headroom.platform.shared_cache")

# A connect or reply from Redis slower than this is treated as a Redis that is down (a cache must not make a page
# slower than rendering it).
TIMEOUT_SECONDS = 1.0
# A value larger than this is not stored: Redis's own limit for a string is 512 MB
# (https://redis.io/docs/latest/develop/data-types/strings/), ours keeps one entry small next to the job queue.
MAX_VALUE_BYTES = 8 * 1024 * 1024
# The longest `make` is waited for by a second caller of the same key, and how long its lock lives if its holder
# dies (a cold render of the weekly email takes seconds; a minute covers a busy machine).
LOCK_SECONDS = 60.0
POLL_SECONDS = 0.05
MEMORY_ENTRIES = 64
PREFIX = "headroom:cache:"


# Stripes of the memory cache's make-once locks: two keys share a lock only when their hashes meet modulo this.
LOCK_STRIPES = 64


def _any(_value: bytes) -> bool:
    return True


def _stored(cache: SharedCache, key: str, fresh: Callable[[bytes], bool]) -> bytes | None:
    """The value stored under `key` when `fresh` accepts it, else None."""
    found = cache.get(key)
    return found if found is not None and fresh(found) else None


class SharedCache(Protocol):
    def get(self, key: str) -> bytes | None:
        """The stored value of `key`, or None (missing, expired or unreachable)."""

    def put(self, key: str, value: bytes, *, ttl_seconds: float) -> bool:
        """Store `value` under `key` for `ttl_seconds`; False when it was not stored (too large, unreachable)."""

    def get_or_make(self, key: str, make: Callable[[], bytes], *, ttl_seconds: float,
                    fresh: Callable[[bytes], bool] = _any, lock_key: str | None = None) -> bytes:
        """The stored value of `key` when `fresh` accepts it, else `make()` stored in its place; concurrent callers
        of one `lock_key` (default: `key`) run `make` once."""


class MemoryCache:
    """This process's fallback: an LRU of MEMORY_ENTRIES with a TTL per entry and a lock per key being made."""

    def __init__(self, entries: int = MEMORY_ENTRIES, clock: Callable[[], float] = time.monotonic) -> None:
        self._entries = entries
        self._clock = clock
        self._values: OrderedDict[str, tuple[float, bytes]] = OrderedDict()
        self._lock = threading.Lock()
        # One lock per stripe of key names, never removed: a lock popped from a dict by the caller who finished
        # while another still waited on it let a third caller make the same value beside the second.
        self._making = tuple(threading.Lock() for _ in range(LOCK_STRIPES))

    def get(self, key: str) -> bytes | None:
        with self._lock:
            kept = self._values.get(key)
            if kept is None:
                return None
            if kept[0] <= self._clock():
                del self._values[key]
                return None
            self._values.move_to_end(key)
            return kept[1]

    def put(self, key: str, value: bytes, *, ttl_seconds: float) -> bool:
        if len(value) > MAX_VALUE_BYTES:
            return False
        with self._lock:
            self._values[key] = (self._clock() + ttl_seconds, value)
            self._values.move_to_end(key)
            while len(self._values) > self._entries:
                self._values.popitem(last=False)
        return True

    def get_or_make(self, key: str, make: Callable[[], bytes], *, ttl_seconds: float,
                    fresh: Callable[[bytes], bool] = _any, lock_key: str | None = None) -> bytes:
        found = _stored(self, key, fresh)
        if found is not None:
            return found
        with self._making[hash(lock_key or key) % LOCK_STRIPES]:
            found = _stored(self, key, fresh)  # the holder before us may have stored it while we waited
            if found is None:
                found = make()
                self.put(key, found, ttl_seconds=ttl_seconds)
        return found


class RedisCache:
    """The installation's cache in Redis: every API process and worker on the same REDIS_URL shares it."""

    def __init__(self, redis_url: str) -> None:
        self._client = redis_client(redis_url, TIMEOUT_SECONDS)

    @staticmethod
    def _errors() -> tuple[type[BaseException], ...]:
        import redis

        return (redis.RedisError, OSError)

    def get(self, key: str) -> bytes | None:
        try:
            value = self._client.get(PREFIX + key)
        except self._errors() as exc:
            log.warning("cache.unreachable", op="get", error_type=type(exc).__name__)
            return None
        return bytes(value) if value is not None else None

    def put(self, key: str, value: bytes, *, ttl_seconds: float) -> bool:
        if len(value) > MAX_VALUE_BYTES:
            log.warning("cache.too_large", bytes=len(value))
            return False
        try:
            self._client.set(PREFIX + key, value, px=max(1, int(ttl_seconds * 1000)))
        except self._errors() as exc:
            log.warning("cache.unreachable", op="put", error_type=type(exc).__name__)
            return False
        return True

    def get_or_make(self, key: str, make: Callable[[], bytes], *, ttl_seconds: float,
                    fresh: Callable[[bytes], bool] = _any, lock_key: str | None = None) -> bytes:
        found = _stored(self, key, fresh)
        if found is not None:
            return found
        lock = self._client.lock(PREFIX + "lock:" + (lock_key or key), timeout=LOCK_SECONDS, sleep=POLL_SECONDS,
                                 blocking_timeout=LOCK_SECONDS)
        try:
            held = lock.acquire()
        except self._errors() as exc:
            log.warning("cache.unreachable", op="lock", error_type=type(exc).__name__)
            return make()
        try:
            found = _stored(self, key, fresh) if held else None  # the holder before us may have stored it
            if found is None:
                found = make()
                self.put(key, found, ttl_seconds=ttl_seconds)
            return found
        finally:
            if held:
                try:
                    lock.release()
                except self._errors() + (_lock_error(),):  # expired while making: someone may hold it now
                    log.warning("cache.lock_lost", key_prefix=key.split(":")[0])


def _lock_error() -> type[BaseException]:
    from redis.exceptions import LockError

    return LockError


_memory = MemoryCache()


def shared_cache(redis_url: str | None) -> SharedCache:
    """The cache every process of the installation shares: Redis at `redis_url`, else this process's memory."""
    return RedisCache(redis_url) if redis_url else _memory


def memory_cache() -> MemoryCache:
    """This process's fallback cache (what `shared_cache(None)` returns)."""
    return _memory


__all__ = ["MemoryCache", "RedisCache", "SharedCache", "memory_cache", "shared_cache"]
