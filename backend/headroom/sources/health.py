"""Record a data source's health after each collection attempt. Callers commit.

A source is `failing` once it has failed FAILING_AFTER times in a row (one transient blip is retried inside
the task and doesn't flip the status); the last error is kept, scrubbed of anything that looks like a secret.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Protocol

FAILING_AFTER = 3
_SECRETISH = re.compile(r"(?i)(secret|token|password|signature|credential)[^\s,;]*[=:]\s*\S+")


class HasHealth(Protocol):
    status: str
    last_success_at: dt.datetime | None
    last_error_at: dt.datetime | None
    last_error: str | None
    consecutive_failures: int


def record_success(source: HasHealth, now: dt.datetime) -> None:
    source.status = "ok"
    source.last_success_at = now
    source.consecutive_failures = 0


def record_failure(source: HasHealth, now: dt.datetime, error: str) -> None:
    source.consecutive_failures += 1
    source.last_error_at = now
    source.last_error = _SECRETISH.sub(r"\1=[redacted]", error)[:2000]
    if source.consecutive_failures >= FAILING_AFTER:
        source.status = "failing"
