"""Test fixtures. They connect to services started by scripts/test.sh; they start nothing themselves.

Environment (set by scripts/test.sh):
  HEADROOM_TEST_DATABASE_URL  PostgreSQL migrated to head
  HEADROOM_TEST_REDIS_URL     Redis
  HEADROOM_TEST_AWS_ENDPOINT  the moto server standing in for EC2, STS and CloudWatch
  HEADROOM_TEST_PROMETHEUS_URL a real Prometheus (when a test needs it)
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from app_support import make_app_context, make_settings

REPO_ROOT = Path(__file__).resolve().parents[2]

# Python's cyclic garbage collector collects its youngest generation after 700 more allocations than frees and the
# oldest (everything) after ten of the middle one's collections, by default
# (https://docs.python.org/3/library/gc.html#gc.set_threshold). A test process holds some hundreds of MB of objects
# that live as long as it does (the app's modules, SQLAlchemy's and pydantic's caches), and every full collection
# walked them all: about a quarter of a second of CPU each, a tenth to a fifth of the CPU of the costliest test files.
# Ten thousand makes full collections about 14 times rarer; the processes' peak memory stayed the same
# (bench/ci_time.md, fifth pass).
gc.set_threshold(10_000)


def _require_env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run the suite through `make test` (scripts/test.sh)", pytrace=False)
    return value


@pytest.fixture(scope="session")
def aws_endpoint_url() -> str:
    """Return the moto server URL, with dummy credentials in the environment for boto3."""
    url = _require_env("HEADROOM_TEST_AWS_ENDPOINT")
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    return url


@pytest.fixture(scope="session", autouse=True)
def job_table() -> None:
    """Install the job table, as every entry point does (headroom.jobs.all_jobs): services queue jobs by name."""
    from headroom.jobs import all_jobs

    all_jobs()


@pytest.fixture(scope="session", autouse=True)
def cheap_password_hashing() -> None:
    """Hash passwords with argon2id at its smallest cost: the suite signs up and logs in thousands of times, and
    production's 64 MiB x 3 passes x 4 lanes cost 0.25 s of CPU each (seconds under load). The hash format and
    verification path are the same; platform/test_password_hashing.py checks the production parameters."""
    from argon2 import PasswordHasher
    from headroom.platform.security import use_password_hasher

    use_password_hasher(PasswordHasher(time_cost=1, memory_cost=8, parallelism=1))


@pytest.fixture(scope="session", autouse=True)
def stop_the_upload_parser() -> Iterator[None]:
    """Stop the upload parser's process (platform/isolated.py) at the end of the run: a pytest-xdist worker ends
    without the exit handlers that would, and the process, its forkserver and resource tracker stayed behind."""
    yield
    from headroom.platform.isolated import shutdown

    shutdown(wait=True)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


# --- database and API fixtures ---------------------------------------------------------------------------

import datetime as dt  # noqa: E402
from typing import Any  # noqa: E402

from sqlalchemy import Connection, Engine, create_engine  # noqa: E402
from sqlalchemy.orm import Session, sessionmaker  # noqa: E402


@pytest.fixture(scope="session")
def database_url() -> str:
    return _require_env("HEADROOM_TEST_DATABASE_URL")


@pytest.fixture(scope="session")
def redis_url() -> str:
    return _require_env("HEADROOM_TEST_REDIS_URL")


@pytest.fixture(scope="session")
def engine(database_url: str) -> Iterator[Engine]:
    eng = create_engine(database_url, pool_pre_ping=True)
    yield eng
    eng.dispose()


@pytest.fixture()
def connection(engine: Engine) -> Iterator[Connection]:
    """A connection inside a transaction that is rolled back after the test (nothing persists)."""
    conn = engine.connect()
    trans = conn.begin()
    try:
        yield conn
    finally:
        trans.rollback()
        conn.close()


@pytest.fixture()
def sessions(connection: Connection) -> sessionmaker[Session]:
    """Sessions whose commits only release a savepoint of the test's outer transaction."""
    return sessionmaker(bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False)


@pytest.fixture()
def db(sessions: sessionmaker[Session]) -> Iterator[Session]:
    session = sessions()
    try:
        yield session
    finally:
        session.close()


class Clock:
    """A settable clock for the app (tests move time instead of sleeping)."""

    def __init__(self) -> None:
        self.now = dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, **kwargs: Any) -> None:
        self.now += dt.timedelta(**kwargs)


@pytest.fixture()
def clock() -> Clock:
    return Clock()


@pytest.fixture()
def settings(redis_url: str, aws_endpoint_url: str) -> Any:
    return make_settings(redis_url, aws_endpoint_url)


@pytest.fixture()
def app_ctx(sessions: sessionmaker[Session], settings: Any, clock: Clock, tmp_path: Path) -> Any:
    return make_app_context(sessions, settings, clock, tmp_path)


@pytest.fixture()
def app(app_ctx: Any) -> Any:
    from headroom.api.app import create_app

    return create_app(app_ctx)


@pytest.fixture()
def make_client(app: Any) -> Any:
    from fastapi.testclient import TestClient

    clients: list[TestClient] = []

    def _make() -> TestClient:
        client = TestClient(app, raise_server_exceptions=False)
        clients.append(client)
        return client

    yield _make
    for c in clients:
        c.close()


@pytest.fixture()
def client(make_client: Any) -> Any:
    return make_client()
