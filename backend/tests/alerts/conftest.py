"""Alert fixtures: the real SMTP server (aiosmtpd, tests/smtp_server.py) for the email channel."""

from __future__ import annotations

from smtp_server import smtp_server

__all__ = ["smtp_server"]
