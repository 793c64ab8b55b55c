"""Fixed-window rate limits, in Redis when there is one (shared by every API process), else in memory."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol

from headroom.core.errors import RateLimited


class RateLimiter(Protocol):
    def hit(self, key: str, limit: int, window_seconds: int) -> None:
        """Count one attempt under `key`; raise RateLimited when the window's limit is exceeded."""

    def reset(self, key: str) -> None:
        """Forget the attempts under `key` (after a successful login)."""


class MemoryRateLimiter:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._windows: dict[str, tuple[float, int]] = {}

    def hit(self, key: str, limit: int, window_seconds: int) -> None:
        now = self._clock()
        with self._lock:
            start, count = self._windows.get(key, (now, 0))
            if now - start >= window_seconds:
                start, count = now, 0
            count += 1
            self._windows[key] = (start, count)
        if count > limit:
            raise RateLimited(
                "Too many attempts; try again later.",
                retry_after_seconds=max(1, int(window_seconds - (now - start))),
            )

    def reset(self, key: str) -> None:
        with self._lock:
            self._windows.pop(key, None)


class RedisRateLimiter:
    def __init__(self, redis_url: str, prefix: str = "headroom:rl:") -> None:
        import redis

        # Bounded: an unresponsive Redis must fail the request in seconds, not hold it (and a worker thread) for ever.
        self._redis = redis.Redis.from_url(redis_url, socket_connect_timeout=2, socket_timeout=2)
        self._prefix = prefix

    def hit(self, key: str, limit: int, window_seconds: int) -> None:
        name = self._prefix + key
        pipe = self._redis.pipeline()
        pipe.incr(name)
        pipe.expire(name, window_seconds, nx=True)
        pipe.ttl(name)
        count, _, ttl = pipe.execute()
        if int(count) > limit:
            raise RateLimited("Too many attempts; try again later.", retry_after_seconds=max(1, int(ttl)))

    def reset(self, key: str) -> None:
        self._redis.delete(self._prefix + key)
