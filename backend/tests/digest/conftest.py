"""Digest fixtures: a real SMTP server (aiosmtpd, tests/smtp_server.py) on 127.0.0.1 that keeps what it receives
and can be told to refuse, and helpers that seed an organisation with findings and sources through the real
services."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from smtp_server import Received, SmtpRecorder, free_port, smtp_server

__all__ = ["Received", "SmtpRecorder", "free_port", "smtp_server"]  # the digest tests import these from here


@pytest.fixture()
def smtp_settings(smtp_server: SmtpRecorder) -> Any:
    """Settings pointing at the test SMTP server; no REDIS_URL, so the weekly job sends in this process."""
    from headroom.platform.settings import Settings

    return Settings(HEADROOM_ENV="test", HEADROOM_SECRET_KEY="test-secret-key-" + "x" * 32,
                    HEADROOM_SMTP_HOST="127.0.0.1", HEADROOM_SMTP_PORT=smtp_server.port,
                    HEADROOM_SMTP_SECURITY="none", HEADROOM_SMTP_FROM="Headroom <digest@headroom.example.com>",
                    HEADROOM_PUBLIC_URL="https://headroom.example.com")


@pytest.fixture()
def job_sessions(sessions: Any) -> Any:
    """The test's sessions, which the digest services' units of work run in (see `job_context`)."""
    return sessions


@pytest.fixture()
def job_context(job_sessions: Any) -> Any:
    """Build the JobContext the digest services take: units of work inside the test's transaction (each commit a
    savepoint), the real queue, and retry waits that return at once."""
    from headroom.platform.jobs import dispatch
    from headroom.platform.jobs.context import JobContext

    @contextlib.contextmanager
    def unit() -> Iterator[Any]:
        session = job_sessions()
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    def make(settings: Any) -> JobContext:
        def queue(name: str, **params: Any) -> str:
            return dispatch.enqueue(name, settings, "unused", **params)

        return JobContext(settings=settings, database_url="unused", units=unit, queue=queue, sleep=lambda _s: None)

    return make
