"""Database engine and sessions. Services never commit; the request or the task does."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from contextlib import contextmanager
from functools import lru_cache

import psycopg
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as SQLAlchemyTimeoutError
from sqlalchemy.orm import Session, sessionmaker

from headroom.platform.telemetry import request_timing


def normalise_database_url(url: str) -> str:
    """Use the psycopg 3 driver for plain postgresql:// URLs."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


# The pool of each engine: connections kept open, and how many more a burst may open (closed again after use).
# An API process runs at most POOL_CONNECTIONS requests at once on as many threads (platform/inflight.py), so a
# running request always finds a connection: no thread waits on the pool while holding up the others.
POOL_SIZE = 5
MAX_OVERFLOW = 35
POOL_CONNECTIONS = POOL_SIZE + MAX_OVERFLOW


@lru_cache(maxsize=8)
def engine_for(url: str) -> Engine:
    """Return a pooled engine for a database URL (one per URL per process).

    hide_parameters: a database error's text carries no bound parameters (a request body's password, a
    credential being stored), so an exception message or traceback in a log line cannot leak them.
    """
    return create_engine(
        normalise_database_url(url), pool_pre_ping=True, pool_size=POOL_SIZE, max_overflow=MAX_OVERFLOW,
        hide_parameters=True
    )


def _statement_started(conn: Any, cursor: Any, statement: Any, parameters: Any, context: Any, executemany: bool) -> None:
    if request_timing() is not None:
        conn.info.setdefault("headroom_started", []).append(time.perf_counter())


def _statement_ended(conn: Any, cursor: Any, statement: Any, parameters: Any, context: Any, executemany: bool) -> None:
    """Adds a statement's time to the request's Server-Timing `db` figure (platform/telemetry.py)."""
    timing = request_timing()
    started = conn.info.get("headroom_started")
    if timing is None or not started:
        return
    timing.db_seconds += time.perf_counter() - started.pop()
    timing.db_statements += 1


def _statement_failed(context: Any) -> None:
    """A statement that raised has no after_cursor_execute: its start is dropped (its time is not counted)."""
    started = context.connection.info.get("headroom_started") if context.connection is not None else None
    if started:
        started.pop()


# Every engine (the primary's, the read replica's) times its statements for the request that runs them.
event.listen(Engine, "before_cursor_execute", _statement_started)
event.listen(Engine, "after_cursor_execute", _statement_ended)
event.listen(Engine, "handle_error", _statement_failed)


def session_factory(url: str) -> sessionmaker[Session]:
    return sessionmaker(bind=engine_for(url), expire_on_commit=False, autoflush=False)


@contextmanager
def session_scope(url: str) -> Iterator[Session]:
    """A unit of work for tasks and scripts: commit on success, roll back on error."""
    session = session_factory(url)()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


# --- the database being unreachable ---------------------------------------------------------------------------
#
# PostgreSQL's SQLSTATE classes (PostgreSQL documentation, Appendix A "PostgreSQL Error Codes",
# https://www.postgresql.org/docs/current/errcodes-appendix.html): class 08 is "Connection Exception";
# 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up or shutting down);
# 53300 too_many_connections. psycopg raises OperationalError without a SQLSTATE when no connection could be made
# at all (refused, timed out, name not resolved).
_OUTAGE_STATES = frozenset({"57P01", "57P02", "57P03", "53300"})

def driver_connection(db: Session) -> psycopg.Connection[Any]:
    """The psycopg connection under the session's transaction (begun if it was not), for the store's hot paths
    where the ORM's statement handling costs more than the work: COPY, binary results, savepoints. Statements
    on it are part of the session's transaction and commit or roll back with it."""
    conn = db.connection().connection.driver_connection
    if conn is None:  # only a connection the pool has already closed has none
        raise RuntimeError("the session's database connection is closed")
    return conn  # type: ignore[no-any-return]


def driver_cursor(db: Session, *, binary: bool = False) -> psycopg.Cursor[Any]:
    """A cursor of `driver_connection(db)`, to use in a `with` block (binary: results in PostgreSQL's binary
    format, which the packed point arrays are read in)."""
    return driver_connection(db).cursor(binary=binary)



def is_database_outage(exc: BaseException) -> bool:
    """True when an error means the database cannot be reached or is not accepting work right now (a retry later
    may succeed), not that a statement was wrong: no connection could be made or it was lost, the server is
    shutting down or starting up, or the pool had no free connection in time."""
    if isinstance(exc, SQLAlchemyTimeoutError):
        return True
    if isinstance(exc, DBAPIError):
        if exc.connection_invalidated:
            return True
        orig = exc.orig
        if isinstance(orig, psycopg.OperationalError):
            state = getattr(orig, "sqlstate", None)
            return state is None or state.startswith("08") or state in _OUTAGE_STATES
    return False


class OutageLog:
    """Say once per outage that the database is unreachable, not once per failing request.

    `record` returns True for the first failure after `quiet_seconds` without one (an outage begins: log it),
    False for the failures inside it; `suppressed` counts those, so the next outage's line can say how many
    requests the last one turned away."""

    def __init__(self, quiet_seconds: float = 30.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.quiet_seconds = quiet_seconds
        self._clock = clock
        self._last: float | None = None
        self.suppressed = 0
        self._lock = threading.Lock()

    def record(self) -> tuple[bool, int]:
        """Count one failure; return (whether it starts an outage, failures not logged in the previous one)."""
        now = self._clock()
        with self._lock:
            starts = self._last is None or now - self._last > self.quiet_seconds
            previous = self.suppressed
            if starts:
                self.suppressed = 0
            else:
                self.suppressed += 1
            self._last = now
            return starts, previous if starts else 0
