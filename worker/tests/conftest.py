"""Worker tests connect to the Redis and PostgreSQL started by scripts/test.sh."""

from __future__ import annotations

import os

import pytest
from xdist_workers import redis_db


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run the suite through `make test`", pytrace=False)
    return value


@pytest.fixture(scope="session")
def worker_env() -> dict[str, str]:
    """Environment for a worker process: its own Redis database so it can't see other tests' keys."""
    redis_url = redis_db(_env("HEADROOM_TEST_REDIS_URL"), 3)
    env = {**os.environ, "REDIS_URL": redis_url, "DATABASE_URL": _env("HEADROOM_TEST_DATABASE_URL"),
           "HEADROOM_ENV": "test"}
    os.environ.setdefault("REDIS_URL", redis_url)
    return env
