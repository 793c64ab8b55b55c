"""Platform fixtures: the real SMTP server the transport's tests send to (tests/smtp_server.py)."""

from __future__ import annotations

from smtp_server import smtp_server

__all__ = ["smtp_server"]
