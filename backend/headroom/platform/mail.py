"""Account email (sign-up links, "someone used your address"): over SMTP when HEADROOM_SMTP_HOST is set, else
written to HEADROOM_DATA_DIR/outbox (files only the server's user can read) so an install without a mail server can
still finish a sign-up. The log says where the message went, never what it says: a sign-up link is a credential.

Sending happens after the response (a background task), so neither a slow mail server nor which email was sent
shows in the answer's timing; failures are logged, never raised into a request."""

from __future__ import annotations

import datetime as dt
import html
import itertools
import re
from pathlib import Path
from typing import Protocol

from headroom.platform.logging import get_logger
from headroom.platform.settings import Settings
from headroom.platform.smtp import SendError, SmtpConfig, compose, config_from_settings, send_message

log = get_logger("headroom.mail")


class Mailer(Protocol):
    def send(self, to: str, subject: str, text: str) -> None:
        """Deliver a plain-text email (an HTML alternative is derived); log, never raise, on failure."""


def html_page(text: str) -> str:
    """Plain text as a minimal HTML page: escaped, links made clickable, paragraphs kept."""
    escaped = html.escape(text)
    linked = re.sub(r"(https?://[^\s<]+)", r'<a href="\1">\1</a>', escaped)
    paragraphs = "".join(f"<p>{p.replace(chr(10), '<br>')}</p>" for p in linked.split("\n\n") if p.strip())
    return f"<!doctype html><html><body>{paragraphs}</body></html>"


class SmtpMailer:
    def __init__(self, config: SmtpConfig) -> None:
        self.config = config

    def send(self, to: str, subject: str, text: str) -> None:
        message = compose(self.config.sender, [to], subject, text, html_page(text))
        try:
            send_message(self.config, message, [to])
        except SendError as exc:
            log.warning("mail.failed", subject=subject, error=str(exc))


class OutboxMailer:
    """No mail server: each message goes to the log (a warning) and, when `directory` is set, to a text file there."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self._seq = itertools.count(1)

    def send(self, to: str, subject: str, text: str) -> None:
        path = None
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
            stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%f")
            path = self.directory / f"{stamp}-{next(self._seq):04d}.txt"
            path.touch(mode=0o600)
            path.write_text(f"To: {to}\nSubject: {subject}\n\n{text}", encoding="utf-8")
        log.warning("mail.not_sent", reason="no mail server configured (HEADROOM_SMTP_HOST is unset)",
                    subject=subject, outbox_file=str(path) if path else None)


def mailer_from_settings(settings: Settings) -> Mailer:
    config = config_from_settings(settings)
    if config is not None:
        return SmtpMailer(config)
    return OutboxMailer(settings.data_dir / "outbox")
