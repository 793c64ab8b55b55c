"""A test file's tests on one connection: fixtures a directory's conftest imports when its tests share data that
is slow to build (the demo cluster ingested, advised).

A conftest imports `shared_connection_fixture` and `savepoint_connection` (the fixtures `shared_connection` and
`connection`). `shared_connection` is opened once per test file (module scope), in a transaction rolled back after
the file's last test; data built on it by a module-scoped fixture is committed into that transaction. The
`connection` below replaces the suite's: each test runs in a savepoint of the shared transaction, rolled back at
its end, so a test may change the shared data and the next test sees it as it was built. Tests that commit on a
connection of their own (subprocesses, servers with their own sessions) do not see the shared data.

Module scope, not package: the test directories have no __init__.py, so pytest has no package to end the scope
and a "package" fixture lives until the session ends
(https://docs.pytest.org/en/stable/how-to/fixtures.html#fixture-scopes). A shared transaction that lives on holds
the locks its writes took (a new day's partition of metric_points locks metric_series against inserts), and every
later test on that worker that writes a series waits on it for ever. With `--dist loadgroup` a file runs whole on
one worker, so the data is still built once per file.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Connection, Engine
from sqlalchemy.orm import Session, sessionmaker


@pytest.fixture(scope="module", name="shared_connection")
def shared_connection_fixture(engine: Engine) -> Iterator[Connection]:
    """The directory's connection, in a transaction rolled back after its last test."""
    conn = engine.connect()
    trans = conn.begin()
    try:
        yield conn
    finally:
        trans.rollback()
        conn.close()


@pytest.fixture(name="connection")
def savepoint_connection(shared_connection: Connection) -> Iterator[Connection]:
    """The shared connection inside a savepoint rolled back after the test (what the test wrote does not persist)."""
    savepoint = shared_connection.begin_nested()
    try:
        yield shared_connection
    finally:
        if savepoint.is_active:
            savepoint.rollback()


def shared_sessions(shared_connection: Connection) -> sessionmaker[Session]:
    """Sessions for a module-scoped fixture: their commits land in the shared transaction."""
    return sessionmaker(bind=shared_connection, join_transaction_mode="create_savepoint", expire_on_commit=False)
