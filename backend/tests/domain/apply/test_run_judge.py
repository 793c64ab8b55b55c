"""Judging a step (domain.apply.run): the p99 of each window and the guard's rule (docs/thresholds/apply-guards.md):
trips above factor x before and above the floor, unless the same hours last week were as high; no data trips."""

from __future__ import annotations

import math

import pytest
from headroom.domain.apply.guards import READ_LATENCY, SCHEDULER_WAIT
from headroom.domain.apply.run import judge, p99


def test_p99_is_numpy_s_linear_99th_percentile_of_the_finite_values() -> None:
    # 1..100: rank 0.99 x 99 = 98.01 -> 99 + 0.01 x (100 - 99) = 99.01
    assert p99([float(v) for v in range(1, 101)]) == pytest.approx(99.01)
    assert p99([5.0, math.nan, math.inf]) == 5.0
    assert p99([]) is None and p99([math.nan]) is None


@pytest.mark.parametrize(("guard", "before", "after", "last_week", "trips", "words"), [
    # latency: 1.5 x and above 10 ms (docs/thresholds/apply-guards.md#latency)
    (READ_LATENCY, 2.0, 30.0, None, True, "Read latency got worse: 2 ms before, 30 ms after"),
    (READ_LATENCY, 2.0, 2.9, None, False, "Read latency held"),
    (READ_LATENCY, 0.3, 9.0, None, False, "Read latency held"),  # 30 x, but under the 10 ms floor
    (READ_LATENCY, 12.0, 6.0, None, False, "Read latency improved: 12 ms before, 6 ms after"),
    # the same hours last week were as high: the usual cycle, not the step
    (READ_LATENCY, 8.0, 20.0, 18.0, False, "no more than in the same hours last week (18 ms): held"),
    (READ_LATENCY, 8.0, 40.0, 18.0, True, "the same hours last week: 18 ms"),
    # the scheduler latch wait: 2 x and above 10 ms (docs/thresholds/apply-guards.md#scheduler)
    (SCHEDULER_WAIT, 8.0, 15.0, None, False, "held"),
    (SCHEDULER_WAIT, 8.0, 17.0, None, True, "got worse"),
    # no data: a step is not judged blind (docs/thresholds/apply-guards.md#watch)
    (READ_LATENCY, None, 2.0, None, True, "no data before the step"),
    (READ_LATENCY, 2.0, None, None, True, "no data after the step"),
])
def test_a_guard_trips_only_when_the_step_made_it_worse(guard, before, after, last_week, trips, words) -> None:  # type: ignore[no-untyped-def]
    reading = judge(guard, ["vol-1"], before=before, after=after, last_week=last_week)
    assert reading.tripped is trips
    assert words in reading.verdict, reading.verdict
    assert "None" not in reading.verdict
