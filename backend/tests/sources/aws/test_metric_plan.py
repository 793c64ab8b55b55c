"""The GetMetricData planner: every plan covers each series once, respects the per-call limits, and uses
exactly the lower bound of calls max(ceil(S/500), ceil(T/100,800)) (limits: docs/reference/cloudwatch.md#getmetricdata)."""

from __future__ import annotations

import math

from headroom.sources.aws.metric_plan import (
    MAX_DATAPOINTS,
    MAX_QUERIES,
    SweepPlan,
    lower_bound,
    normalise_points,
    plan_calls,
    plan_sweep,
    plan_window,
    points_in,
)
from hypothesis import given, settings
from hypothesis import strategies as st

DAY = 86400


def _check_valid(plan: SweepPlan, periods: list[int], window: int) -> None:
    seen = sorted(i for r in plan.requests for i in r.series)
    assert seen == list(range(len(periods))), "every series exactly once"
    for r in plan.requests:
        assert 1 <= len(r.series) <= MAX_QUERIES
        assert r.points == sum(points_in(window, periods[i]) for i in r.series)
        assert r.pages == math.ceil(r.points / MAX_DATAPOINTS)


# Cases with hand-computed answers: 1,000 volumes x 11 EBS metrics, 14 days of 1-minute points
# = 11,000 x 20,160 = 221,760,000 points / 100,800 = 2,200 calls (the datapoint limit binds).
CASES = [
    (1, 60, 60, 1),
    (500, 11 * 60, 60, 1),  # 500 queries x 11 points: one call
    (501, 11 * 60, 60, 2),  # the 501st query needs a second call
    (11_000, 11 * 60, 60, 22),  # incremental sweep of 1,000 volumes: ceil(11,000 / 500)
    (11_000, 14 * DAY, 60, 2_200),
    (13, 15_507 * 60, 60, 2),  # 201,591 points: only NextToken paging reaches 2 (no 2-rectangle tiling does)
    (1, 15 * DAY, 60, 1),  # 21,600 points of one series: one call
]


def test_hand_computed_cases() -> None:
    for series, window, period, expected in CASES:
        plan = plan_sweep([period] * series, window)
        _check_valid(plan, [period] * series, window)
        assert (plan.calls, plan.lower_bound) == (expected, expected), (series, window)


def test_metrics_requested_stays_one_per_series_for_day_windows() -> None:
    # 14 days: requests of 5 series fill one page exactly (5 x 20,160 = 100,800), so no query is re-sent.
    for series in (11_000, 63, 5):
        plan = plan_sweep([60] * series, 14 * DAY)
        assert plan.metrics_requested == series and plan.calls == plan.lower_bound


@settings(max_examples=300, deadline=None)
@given(series=st.integers(1, 20_000), points=st.integers(1, 21_600))
def test_uniform_sweeps_meet_the_lower_bound(series: int, points: int) -> None:
    p = normalise_points(series, points)
    assert p >= points and p - points < 210
    assert plan_calls(series, p) == lower_bound([p] * series)


@settings(max_examples=150, deadline=None)
@given(ebs=st.integers(0, 12_000), ec2=st.integers(0, 3_000),
       window=st.sampled_from([14 * DAY, 7 * DAY]) | st.integers(1, 201).map(lambda m: m * 60))
def test_mixed_periods_meet_the_lower_bound_for_the_collector_windows(ebs: int, ec2: int, window: int) -> None:
    periods = [60] * ebs + [300] * ec2
    if not periods:
        return
    plan = plan_sweep(periods, window)
    _check_valid(plan, periods, window)
    assert plan.calls == plan.lower_bound


@settings(max_examples=60, deadline=None)
@given(ebs=st.integers(1, 6_000), ec2=st.integers(0, 1_500), minutes=st.integers(1, 21_000))
def test_any_window_meets_the_bound_after_widening(ebs: int, ec2: int, minutes: int) -> None:
    periods = [60] * ebs + [300] * ec2
    plan, window = plan_window(periods, minutes * 60)
    assert window >= minutes * 60
    _check_valid(plan, periods, window)
    assert plan.calls == plan.lower_bound
