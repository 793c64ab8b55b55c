"""Send an email over SMTP (smtplib): implicit TLS ("ssl"), STARTTLS ("starttls") or plain ("none"), with
optional authentication. The transport of the weekly digest (headroom.digest.build) and of account mail (platform.mail).

Failures are classified so the caller can decide: `TransientSendError` (the server or the network said "try
later": a 4xx reply, a refused or dropped connection, a time-out) is retried twice within the call by the one
retry helper (SEND_RETRY), then raised as a ConnectionError, which the Celery tasks retry with backoff
(headroom_worker.tasks.TRANSIENT_ERRORS); `PermanentSendError` (a 5xx reply, bad credentials,
a server without STARTTLS, a TLS failure) is recorded and not retried. The password is never logged, never put in
an error message and never in the config's repr.
"""

from __future__ import annotations

import smtplib
import socket
import ssl
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import formatdate, make_msgid, parseaddr
from typing import Literal

from headroom.platform.logging import get_logger
from headroom.platform.retry import RetryPolicy, call_with_retries
from headroom.platform.settings import Settings

log = get_logger("headroom.platform.smtp")

Security = Literal["starttls", "ssl", "none"]
SECURITIES: tuple[str, ...] = ("starttls", "ssl", "none")
# Default ports by security: 587 message submission with STARTTLS (RFC 6409 §3.1), 465 submission over implicit
# TLS (RFC 8314 §3.3), 25 plain SMTP (the IANA service-name registry's "smtp" port, RFC 5321 §4.5.4.2 context).
DEFAULT_PORTS = {"starttls": 587, "ssl": 465, "none": 25}
# Seconds one SMTP command may take before it counts as a transient failure; RFC 5321 §4.5.3.2 allows servers
# minutes per command, but a digest that waits longer than this is better retried by the task.
DEFAULT_TIMEOUT_SECONDS = 30.0
# A transient failure (a 4xx reply, a dropped connection) is tried again twice within the call, after a second or
# two (full jitter), to ride out a blip; longer outages are the caller's (the digest task's backoff, up to 120 s).
SEND_RETRY = RetryPolicy(attempts=3, base_seconds=1.0, cap_seconds=4.0)
# One attempt: someone is waiting for the answer (the digest's test send).
NO_RETRY = RetryPolicy(attempts=1)


class SendError(Exception):
    """Sending failed; `code` is the SMTP reply code when the server gave one."""

    transient = False

    def __init__(self, message: str, *, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


class TransientSendError(SendError, ConnectionError):
    """Try again later (4xx, connection refused or dropped, time-out)."""

    transient = True


class PermanentSendError(SendError):
    """Retrying will not help (5xx, authentication, TLS or configuration)."""


@dataclass(frozen=True)
class SmtpConfig:
    host: str
    port: int
    sender: str
    security: Security = "starttls"
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    # Tests point STARTTLS/SSL at a server with a self-signed certificate by passing their own context.
    ssl_context: ssl.SSLContext | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class SendResult:
    accepted: tuple[str, ...]
    refused: dict[str, str]
    message_id: str


def compose(
    sender: str, recipients: Sequence[str], subject: str, text: str, html: str, *, domain: str | None = None
) -> EmailMessage:
    """Build a multipart/alternative message (text first, HTML preferred) to `recipients`."""
    msg = EmailMessage()
    msg["Subject"] = subject
    msg["From"] = sender
    msg["To"] = ", ".join(recipients)
    msg["Date"] = formatdate(localtime=False, usegmt=True)
    sender_domain = domain or (parseaddr(sender)[1].rpartition("@")[2] or "headroom.localhost")
    msg["Message-ID"] = make_msgid(domain=sender_domain)
    msg.set_content(text)
    msg.add_alternative(html, subtype="html")
    return msg


def _classify(exc: BaseException) -> SendError:
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        codes = [code for code, _ in exc.recipients.values()]
        detail = "; ".join(f"{rcpt}: {code} {_decode(m)}" for rcpt, (code, m) in exc.recipients.items())
        cls = TransientSendError if any(400 <= c < 500 for c in codes) else PermanentSendError
        return cls(f"every recipient was refused: {detail}", code=codes[0] if codes else None)
    if isinstance(exc, smtplib.SMTPAuthenticationError):
        return PermanentSendError(f"authentication failed: {exc.smtp_code} {_decode(exc.smtp_error)}", code=exc.smtp_code)
    if isinstance(exc, smtplib.SMTPResponseException):
        cls = TransientSendError if 400 <= exc.smtp_code < 500 else PermanentSendError
        return cls(f"the server answered {exc.smtp_code} {_decode(exc.smtp_error)}", code=exc.smtp_code)
    if isinstance(exc, smtplib.SMTPNotSupportedError):
        return PermanentSendError(f"the server does not support a required extension: {exc}")
    if isinstance(exc, ssl.SSLError):
        return PermanentSendError(f"TLS failed: {exc}")
    if isinstance(exc, smtplib.SMTPServerDisconnected):
        return TransientSendError("the mail server closed the connection; it is tried again")
    if isinstance(exc, TimeoutError | socket.timeout):
        return TransientSendError("the mail server did not answer in time; check HEADROOM_SMTP_HOST and "
                                  "HEADROOM_SMTP_PORT, and that it is reachable from Headroom")
    if isinstance(exc, socket.gaierror):
        return TransientSendError("the mail server's host name does not resolve; check HEADROOM_SMTP_HOST")
    if isinstance(exc, ConnectionRefusedError):
        return TransientSendError("the mail server refused the connection; check HEADROOM_SMTP_HOST and "
                                  "HEADROOM_SMTP_PORT")
    if isinstance(exc, OSError):  # unreachable networks, resets: the next try may succeed
        reason = exc.strerror or "the connection failed"
        return TransientSendError(f"could not talk to the mail server ({reason.lower()}); check HEADROOM_SMTP_HOST "
                                  "and HEADROOM_SMTP_PORT")
    return PermanentSendError(f"the mail server exchange failed: {exc}")


def _decode(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _connect(config: SmtpConfig) -> smtplib.SMTP:
    if config.security == "ssl":
        context = config.ssl_context or ssl.create_default_context()
        return smtplib.SMTP_SSL(config.host, config.port, timeout=config.timeout, context=context)
    client = smtplib.SMTP(config.host, config.port, timeout=config.timeout)
    if config.security == "starttls":
        client.ehlo()
        client.starttls(context=config.ssl_context or ssl.create_default_context())
        client.ehlo()
    return client


def send_message(
    config: SmtpConfig,
    msg: EmailMessage,
    recipients: Sequence[str],
    *,
    retry: RetryPolicy = SEND_RETRY,
    sleep: Callable[[float], None] = time.sleep,
) -> SendResult:
    """Deliver `msg` to `recipients`, retrying transient failures within `retry` (the one retry helper); raise
    TransientSendError or PermanentSendError when it was not accepted."""
    if not recipients:
        raise PermanentSendError("no recipients")
    return call_with_retries(
        lambda: _send_once(config, msg, recipients),
        policy=retry,
        transient=lambda error: isinstance(error, SendError) and error.transient,
        sleep=sleep,
    )


def _send_once(config: SmtpConfig, msg: EmailMessage, recipients: Sequence[str]) -> SendResult:
    message_id = str(msg["Message-ID"] or "")
    try:
        client = _connect(config)
        try:
            if config.username:
                client.login(config.username, config.password or "")
            refused_raw = client.send_message(msg, from_addr=parseaddr(config.sender)[1], to_addrs=list(recipients))
        finally:
            try:
                client.quit()
            except (smtplib.SMTPException, OSError):
                client.close()
    except Exception as exc:  # noqa: BLE001 - every failure becomes a classified SendError
        error = _classify(exc)
        log.warning("smtp.failed", host=config.host, port=config.port, security=config.security,
                    transient=error.transient, code=error.code, error=str(error))
        raise error from exc
    refused = {rcpt: f"{code} {_decode(m)}" for rcpt, (code, m) in refused_raw.items()}
    accepted = tuple(r for r in recipients if r not in refused)
    log.info("smtp.sent", host=config.host, recipients=len(accepted), refused=len(refused), message_id=message_id)
    return SendResult(accepted=accepted, refused=refused, message_id=message_id)


def config_from_settings(settings: Settings) -> SmtpConfig | None:
    """The SMTP config from HEADROOM_SMTP_*, or None when no host is set (the digest is then skipped)."""
    if not settings.smtp_host:
        return None
    return SmtpConfig(
        host=settings.smtp_host,
        port=settings.smtp_port or DEFAULT_PORTS[settings.smtp_security],
        sender=settings.smtp_from,
        security=settings.smtp_security,
        username=settings.smtp_username or None,
        password=settings.smtp_password.get_secret_value() if settings.smtp_password is not None else None,
    )
