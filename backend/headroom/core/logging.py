"""Structured key/value logging (structlog); secrets are redacted before anything is written."""

from __future__ import annotations

import logging
import re
from typing import Any

import structlog

_SECRET_KEYS = re.compile(r"(password|secret|token|authorization|cookie|api_key|access_key)", re.I)


def _redact(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
    for key in list(event):
        if key != "event" and _SECRET_KEYS.search(key):
            event[key] = "[redacted]"
    return event


def configure_logging(level: str = "INFO", json: bool = False) -> None:
    """Set up structlog once per process."""
    logging.basicConfig(level=level.upper(), format="%(message)s")
    renderer: Any = structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _redact,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        cache_logger_on_first_use=True,
    )


def get_logger(name: str) -> Any:
    return structlog.get_logger(name)
