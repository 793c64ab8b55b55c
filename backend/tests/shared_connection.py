"""A directory's tests on one connection: fixtures a directory's conftest imports when its tests share data that
is slow to build (the demo cluster ingested, advised).

A conftest imports `shared_connection_fixture` and `savepoint_connection` (the fixtures `shared_connection` and
`connection`). `shared_connection` is opened once per directory and xdist worker, in a transaction rolled back after the
directory's last test; data built on it by a package-scoped fixture is committed into that transaction. The
`connection` below replaces the suite's: each test runs in a savepoint of the shared transaction, rolled back at
its end, so a test may change the shared data and the next test sees it as it was built. Tests that commit on a
connection of their own (subprocesses, servers with their own sessions) do not see the shared data.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Connection, Engine
from sqlalchemy.orm import Session, sessionmaker


@pytest.fixture(scope="package", name="shared_connection")
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
    """Sessions for a package-scoped fixture: their commits land in the shared transaction."""
    return sessionmaker(bind=shared_connection, join_transaction_mode="create_savepoint", expire_on_commit=False)
