"""Record a data source's health after each collection attempt. Callers commit.

A source is `failing` once it has failed FAILING_AFTER times in a row (one transient blip is retried inside
the task and doesn't flip the status); the last error is kept, scrubbed of secrets by the one scrubber the logs use
(headroom.platform.logging.scrub): values after a secret-named key, Authorization headers, URL passwords, AWS keys.
"""

from __future__ import annotations

import datetime as dt
from typing import Protocol

from headroom.platform.logging import scrub

FAILING_AFTER = 3
# What of an error is kept (the column is text; a page of HTML or a traceback is cut).
ERROR_LIMIT = 2000


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


def redact_error(error: str) -> str:
    """An error message fit to store and show: secrets removed, ordinary words kept, at most ERROR_LIMIT long."""
    return scrub(error, random_tokens=False)[:ERROR_LIMIT]


def record_failure(source: HasHealth, now: dt.datetime, error: str, *, at_once: bool = False) -> None:
    """Count a failed attempt; `at_once`: a definite answer (the test run when the source is saved) marks the
    source failing without waiting for FAILING_AFTER attempts."""
    source.consecutive_failures += 1
    source.last_error_at = now
    source.last_error = redact_error(error)
    if at_once or source.consecutive_failures >= FAILING_AFTER:
        source.status = "failing"
