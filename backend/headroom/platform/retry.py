"""The one retry helper for calls Headroom makes itself (Prometheus, TiKV status ports, CloudWatch partial
failures, SMTP), on tenacity: a bounded number of attempts, full-jitter exponential backoff, and only the errors
a caller calls transient are retried (anything else is raised at once).

Full jitter: the wait before retry n (1-based) is uniform(0, min(cap, base * 2**(n-1))) (AWS Architecture Blog,
"Exponential Backoff And Jitter"): tenacity's `wait_random_exponential(multiplier=base, max=cap)`. AWS SDK calls are
retried by botocore itself (sources' aws_session); this helper only wraps what botocore cannot see. Tests inject
`sleep` instead of waiting (and check the waits' bounds)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import tenacity

T = TypeVar("T")

# HTTP answers worth another attempt: too many requests, and the server errors a restart or overload gives.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """Attempts (the first call included) and full-jitter backoff bounds, in seconds."""

    attempts: int = 4
    base_seconds: float = 0.5
    cap_seconds: float = 8.0



def call_with_retries(
    fn: Callable[[], T],
    *,
    policy: RetryPolicy,
    transient: Callable[[BaseException], bool],
    sleep: Callable[[float], None] = time.sleep,
    on_retry: Callable[[BaseException, int], None] | None = None,
) -> T:
    """Call `fn` until it returns, raises a non-transient error, or `policy.attempts` calls have failed (the last
    error is raised as it is). `on_retry(error, attempt)` runs before each wait."""

    def before_sleep(state: tenacity.RetryCallState) -> None:
        if on_retry is not None and state.outcome is not None:
            error = state.outcome.exception()
            if error is not None:
                on_retry(error, state.attempt_number)

    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(max(1, policy.attempts)),
        wait=tenacity.wait_random_exponential(multiplier=policy.base_seconds, max=policy.cap_seconds),
        retry=tenacity.retry_if_exception(transient),
        sleep=sleep,
        before_sleep=before_sleep,
        reraise=True,
    )
    return retrying(fn)
