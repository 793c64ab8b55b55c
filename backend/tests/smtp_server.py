"""A real SMTP server (aiosmtpd) on 127.0.0.1 that keeps what it receives and can be told to refuse: the
recorder and its fixture, shared by the SMTP transport's tests (platform/) and the digest's (digest/)."""

from __future__ import annotations

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
    raw: bytes = b""  # the DATA as the server received it, before any parsing


@dataclass
class SmtpRecorder:
    """The aiosmtpd handler: records each message; `reply` (e.g. "550 ...") refuses the DATA instead, and
    `replies` refuses the DATA of a message to one of its addresses."""

    received: list[Received] = field(default_factory=list)
    reply: str | None = None
    replies: dict[str, str] = field(default_factory=dict)
    logins: list[tuple[str, str]] = field(default_factory=list)
    host: str = "127.0.0.1"
    port: int = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's API
        if self.reply is not None:
            return self.reply
        for rcpt in envelope.rcpt_tos:
            if rcpt in self.replies:
                return self.replies[rcpt]
        msg = message_from_bytes(envelope.original_content or envelope.content, policy=policy.default)
        assert isinstance(msg, EmailMessage)
        raw = envelope.original_content or envelope.content
        self.received.append(Received(envelope.mail_from, list(envelope.rcpt_tos), msg, raw))
        return "250 Message accepted for delivery"

    def authenticate(self, server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any) -> AuthResult:
        assert isinstance(auth_data, LoginPassword)
        user, password = auth_data.login.decode(), auth_data.password.decode()
        self.logins.append((user, password))
        # handled=False: aiosmtpd then answers a failure with 535 itself
        return AuthResult(success=(user, password) == ("mailer", "s3cret-smtp-pass"), handled=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture()
def smtp_server() -> Iterator[SmtpRecorder]:
    """A real SMTP server on 127.0.0.1 (plain, AUTH allowed without TLS for the test)."""
    recorder = SmtpRecorder()
    recorder.port = free_port()
    controller = Controller(recorder, hostname="127.0.0.1", port=recorder.port, authenticator=recorder.authenticate,
                            auth_require_tls=False)
    controller.start()
    try:
        yield recorder
    finally:
        controller.stop()
