"""Database engine and sessions. Services never commit; the request or the task does."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import Session, sessionmaker


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
