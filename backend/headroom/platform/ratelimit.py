"""Fixed-window rate limits, in Redis when there is one (shared by every API process), else in memory.

When Redis cannot be reached the Redis limiter carries on with an in-process one (per process, so a little more
lenient with several API processes) and logs a warning once per outage; a limit never turns into a 500.
The login policy built on these counters is in headroom.accounts.login_limits (docs/login-limits.md)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from headroom.platform.errors import RateLimited
from headroom.platform.logging import get_logger
from headroom.platform.redis_client import redis_client

log = get_logger("headroom.ratelimit")

DEFAULT_MESSAGE = "Too many attempts; try again later."


class RateLimiter(Protocol):
    def hit(self, key: str, limit: int, window_seconds: int, message: str = DEFAULT_MESSAGE) -> None:
        """Count one attempt under `key`; raise RateLimited when the window's limit is exceeded."""

    def add(self, key: str, window_seconds: int) -> int:
        """Count one event under `key` (its window starts with the first) and return the window's count."""

    def peek(self, key: str) -> tuple[int, int]:
        """The count under `key` and the seconds left in its window ((0, 0) when there is none)."""

    def reset(self, key: str) -> None:
        """Forget the attempts under `key` (after a successful login)."""


def check(limiter: RateLimiter, key: str, limit: int, message: str = DEFAULT_MESSAGE) -> None:
    """Raise RateLimited when `key` already has `limit` events in its window (counts nothing)."""
    count, seconds_left = limiter.peek(key)
    if count >= limit:
        raise RateLimited(message, retry_after_seconds=max(1, seconds_left))


class MemoryRateLimiter:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._windows: dict[str, tuple[float, int, int]] = {}  # key -> (start, count, window seconds)

    def add(self, key: str, window_seconds: int) -> int:
        now = self._clock()
        with self._lock:
            start, count, window = self._windows.get(key, (now, 0, window_seconds))
            if now - start >= window:
                start, count, window = now, 0, window_seconds
            count += 1
            self._windows[key] = (start, count, window)
            if len(self._windows) > 100_000:  # drop finished windows so a spray of keys cannot grow memory forever
                self._windows = {k: v for k, v in self._windows.items() if now - v[0] < v[2]}
        return count

    def peek(self, key: str) -> tuple[int, int]:
        now = self._clock()
        with self._lock:
            entry = self._windows.get(key)
        if entry is None or now - entry[0] >= entry[2]:
            return 0, 0
        return entry[1], max(1, int(entry[2] - (now - entry[0])))

    def hit(self, key: str, limit: int, window_seconds: int, message: str = DEFAULT_MESSAGE) -> None:
        count = self.add(key, window_seconds)
        if count > limit:
            raise RateLimited(message, retry_after_seconds=self.peek(key)[1] or window_seconds)

    def reset(self, key: str) -> None:
        with self._lock:
            self._windows.pop(key, None)


# Seconds to wait for Redis before counting it as down: a limiter check must never hold a login for long.
REDIS_TIMEOUT_SECONDS = 0.5
# After a failure, Redis is tried again after this many seconds (until then the in-process limiter answers).
REDIS_RETRY_SECONDS = 15.0


class RedisRateLimiter:
    def __init__(
        self,
        redis_url: str,
        prefix: str = "headroom:rl:",
        *,
        timeout_seconds: float = REDIS_TIMEOUT_SECONDS,
        retry_seconds: float = REDIS_RETRY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        import redis

        self._redis = redis_client(redis_url, timeout_seconds)
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self._prefix = prefix
        self._fallback = MemoryRateLimiter(clock)
        self._clock = clock
        self._retry_seconds = retry_seconds
        self._down_until: float | None = None  # set while Redis is considered down
        self._lock = threading.Lock()

    @property
    def degraded(self) -> bool:
        """True while the in-process fallback answers because Redis was unreachable."""
        return self._down_until is not None

    def _call(self, operation: Callable[[Any], Any]) -> tuple[bool, Any]:
        """Run `operation(redis)`; (False, None) when Redis is down (then the caller uses the fallback)."""
        with self._lock:
            if self._down_until is not None and self._clock() < self._down_until:
                return False, None
        try:
            result = operation(self._redis)
        except self._errors as exc:
            with self._lock:
                first = self._down_until is None
                self._down_until = self._clock() + self._retry_seconds
            if first:
                log.warning("ratelimit.redis_unavailable", error=type(exc).__name__,
                            detail="rate limits are kept in this process until Redis answers again")
            return False, None
        with self._lock:
            if self._down_until is not None:
                self._down_until = None
                log.info("ratelimit.redis_recovered")
        return True, result

    def add(self, key: str, window_seconds: int) -> int:
        name = self._prefix + key

        def op(r: Any) -> int:
            pipe = r.pipeline()
            pipe.incr(name)
            pipe.expire(name, window_seconds, nx=True)
            count, _ = pipe.execute()
            return int(count)

        ok, count = self._call(op)
        return int(count) if ok else self._fallback.add(key, window_seconds)

    def peek(self, key: str) -> tuple[int, int]:
        name = self._prefix + key

        def op(r: Any) -> tuple[int, int]:
            pipe = r.pipeline()
            pipe.get(name)
            pipe.ttl(name)
            raw, ttl = pipe.execute()
            return (int(raw), max(1, int(ttl))) if raw is not None else (0, 0)

        ok, result = self._call(op)
        return (int(result[0]), int(result[1])) if ok else self._fallback.peek(key)

    def hit(self, key: str, limit: int, window_seconds: int, message: str = DEFAULT_MESSAGE) -> None:
        count = self.add(key, window_seconds)
        if count > limit:
            raise RateLimited(message, retry_after_seconds=self.peek(key)[1] or window_seconds)

    def reset(self, key: str) -> None:
        name = self._prefix + key
        self._call(lambda r: r.delete(name))
        self._fallback.reset(key)
