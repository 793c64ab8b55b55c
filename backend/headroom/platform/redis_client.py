"""One way to open Redis: a client per (URL, timeout), shared by everything in the process that talks to Redis
(the job dispatcher, the job stats, the rate limiter, the replica write marks, the API's ready check).

redis-py clients are thread-safe and pool their connections; a forked process (a Celery prefork child) gets
fresh connections on first use because the pool checks its process id
(https://redis-py.readthedocs.io/en/stable/connections.html#connection-pools). A timeout bounds both connecting
and each reply, so a Redis that is down costs a caller at most that long.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=16)
def redis_client(redis_url: str, timeout_seconds: float) -> Any:
    """The shared client for `redis_url` whose connects and replies give up after `timeout_seconds`."""
    import redis

    return redis.Redis.from_url(redis_url, socket_connect_timeout=timeout_seconds, socket_timeout=timeout_seconds)
