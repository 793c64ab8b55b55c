"""The one retry helper for calls Headroom makes itself (Prometheus, TiKV status ports, CloudWatch partial
failures, SMTP), on tenacity: a bounded number of attempts, full-jitter exponential backoff, and only the errors
a caller calls transient are retried (anything else is raised at once).

Full jitter: the wait before retry n (1-based) is uniform(0, min(cap, base * 2**(n-1))) (AWS Architecture Blog,
"Exponential Backoff And Jitter"). AWS SDK calls are retried by botocore itself (sources' aws_session); this helper
only wraps what botocore cannot see. Tests inject `sleep` and `rng` instead of waiting."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import tenacity

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """Attempts (the first call included) and full-jitter backoff bounds, in seconds."""

    attempts: int = 4
    base_seconds: float = 0.5
    cap_seconds: float = 8.0

    def delay(self, retry: int, rng: random.Random) -> float:
        """The wait before retry `retry` (0-based): uniform(0, min(cap, base * 2**retry))."""
        return rng.uniform(0.0, min(self.cap_seconds, self.base_seconds * 2**retry))


class _FullJitter(tenacity.wait.wait_base):
    def __init__(self, policy: RetryPolicy, rng: random.Random) -> None:
        self._policy = policy
        self._rng = rng

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        return self._policy.delay(retry_state.attempt_number - 1, self._rng)


def call_with_retries(
    fn: Callable[[], T],
    *,
    policy: RetryPolicy,
    transient: Callable[[BaseException], bool],
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
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
        wait=_FullJitter(policy, rng or random.Random()),
        retry=tenacity.retry_if_exception(transient),
        sleep=sleep,
        before_sleep=before_sleep,
        reraise=True,
    )
    return retrying(fn)
