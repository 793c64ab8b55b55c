"""The one retry helper: attempts, full-jitter waits, transient errors only."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from headroom.platform.retry import RetryPolicy, call_with_retries


def _flaky(failures: int, error: BaseException) -> tuple[list[int], Callable[[], str]]:
    calls: list[int] = []

    def fn() -> str:
        calls.append(1)
        if len(calls) <= failures:
            raise error
        return "ok"

    return calls, fn


def test_transient_errors_are_retried_with_full_jitter_waits() -> None:
    calls, fn = _flaky(3, ConnectionError("blip"))
    sleeps: list[float] = []
    policy = RetryPolicy(attempts=4, base_seconds=0.5, cap_seconds=1.5)
    seen: list[int] = []
    result = call_with_retries(fn, policy=policy, transient=lambda e: isinstance(e, ConnectionError),
                               sleep=sleeps.append, on_retry=lambda _e, n: seen.append(n))
    assert result == "ok" and len(calls) == 4 and seen == [1, 2, 3]
    # uniform(0, min(cap, base * 2**n)): within 0.5, 1.0, then capped at 1.5
    assert len(sleeps) == 3 and sleeps[0] <= 0.5 and sleeps[1] <= 1.0 and sleeps[2] <= 1.5
    assert all(s >= 0 for s in sleeps) and len(set(sleeps)) == 3


def test_the_last_transient_error_is_raised_after_the_attempts() -> None:
    calls, fn = _flaky(10, ConnectionError("down"))
    sleeps: list[float] = []
    with pytest.raises(ConnectionError, match="down"):
        call_with_retries(fn, policy=RetryPolicy(attempts=3), transient=lambda e: isinstance(e, ConnectionError),
                          sleep=sleeps.append)
    assert len(calls) == 3 and len(sleeps) == 2


def test_other_errors_are_raised_at_once() -> None:
    calls, fn = _flaky(10, ValueError("bad data"))
    sleeps: list[float] = []
    with pytest.raises(ValueError):
        call_with_retries(fn, policy=RetryPolicy(attempts=5), transient=lambda e: isinstance(e, ConnectionError),
                          sleep=sleeps.append)
    assert len(calls) == 1 and sleeps == []
