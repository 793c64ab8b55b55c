"""Digest fixtures: a real SMTP server (aiosmtpd) on 127.0.0.1 that keeps what it receives and can be told to
refuse, and helpers that seed an organisation with findings and sources through the real services."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


@dataclass
class Received:
    mail_from: str
    rcpt_tos: list[str]
    message: EmailMessage


@dataclass
class SmtpRecorder:
    """The aiosmtpd handler: records each message; `reply` (e.g. "550 ...") refuses the DATA instead."""

    received: list[Received] = field(default_factory=list)
    reply: str | None = None
    logins: list[tuple[str, str]] = field(default_factory=list)
    host: str = "127.0.0.1"
    port: int = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's API
        if self.reply is not None:
            return self.reply
        msg = message_from_bytes(envelope.original_content or envelope.content, policy=policy.default)
        assert isinstance(msg, EmailMessage)
        self.received.append(Received(envelope.mail_from, list(envelope.rcpt_tos), msg))
        return "250 Message accepted for delivery"

    def authenticate(self, server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any) -> AuthResult:
        assert isinstance(auth_data, LoginPassword)
        user, password = auth_data.login.decode(), auth_data.password.decode()
        self.logins.append((user, password))
        # handled=False: aiosmtpd then answers a failure with 535 itself
        return AuthResult(success=(user, password) == ("mailer", "s3cret-smtp-pass"), handled=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture()
def smtp_server() -> Iterator[SmtpRecorder]:
    """A real SMTP server on 127.0.0.1 (plain, AUTH allowed without TLS for the test)."""
    recorder = SmtpRecorder()
    recorder.port = _free_port()
    controller = Controller(recorder, hostname="127.0.0.1", port=recorder.port, authenticator=recorder.authenticate,
                            auth_require_tls=False)
    controller.start()
    try:
        yield recorder
    finally:
        controller.stop()


@pytest.fixture()
def smtp_settings(smtp_server: SmtpRecorder) -> Any:
    """Settings pointing at the test SMTP server; no REDIS_URL, so the weekly job sends in this process."""
    from headroom.platform.settings import Settings

    return Settings(HEADROOM_ENV="test", HEADROOM_SECRET_KEY="test-secret-key-" + "x" * 32,
                    HEADROOM_SMTP_HOST="127.0.0.1", HEADROOM_SMTP_PORT=smtp_server.port,
                    HEADROOM_SMTP_SECURITY="none", HEADROOM_SMTP_FROM="Headroom <digest@headroom.example.com>",
                    HEADROOM_PUBLIC_URL="https://headroom.example.com")


@pytest.fixture()
def job_sessions(monkeypatch: pytest.MonkeyPatch, sessions: Any) -> Any:
    """Make the digest jobs' own units of work run inside the test's transaction (each commit a savepoint)."""
    import headroom.digest.jobs as job

    @contextlib.contextmanager
    def scope(url: str) -> Iterator[Any]:
        session = sessions()
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    monkeypatch.setattr(job, "session_scope", scope)
    return sessions
