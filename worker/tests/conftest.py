"""Worker tests connect to the Redis and PostgreSQL started by scripts/test.sh."""

from __future__ import annotations

import os
from collections.abc import Iterator

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
    return {**os.environ, "REDIS_URL": redis_url, "DATABASE_URL": _env("HEADROOM_TEST_DATABASE_URL"),
            "HEADROOM_ENV": "test"}


@pytest.fixture(scope="module", autouse=True)
def worker_redis_url(worker_env: dict[str, str]) -> Iterator[str]:
    """REDIS_URL while a module of these tests runs (importing the Celery app reads it), restored after it: on an
    xdist worker the backend's test files may run next in this process, and their Settings() must not inherit a
    broker (the weekly email would queue instead of send, the fleet job would fan out)."""
    before = os.environ.get("REDIS_URL")
    os.environ["REDIS_URL"] = worker_env["REDIS_URL"]
    yield worker_env["REDIS_URL"]
    if before is None:
        os.environ.pop("REDIS_URL", None)
    else:
        os.environ["REDIS_URL"] = before
