"""When a step's watch ends (domain.apply.run.watch_state, docs/thresholds/apply-guards.md#late-data): at the later
of its set period and every guard's first point after the step, and no later than 15 minutes past the period, when
a guard still without data after the step stops the run (judge: no data after the step)."""

from __future__ import annotations

import datetime as dt

import pytest
from headroom.domain.apply.guards import READ_LATENCY, WATCH_GRACE_MINUTES
from headroom.domain.apply.run import WATCH_GRACE, awaiting_data, judge, watch_state

END = dt.datetime(2026, 11, 2, 12, 15, tzinfo=dt.UTC)  # the set period's end (a step applied at 12:00)


def test_the_grace_is_the_documented_15_minutes() -> None:
    # docs/thresholds/apply-guards.md#late-data: three 5-minute CloudWatch periods
    assert WATCH_GRACE_MINUTES == 15 and dt.timedelta(minutes=15) == WATCH_GRACE


@pytest.mark.parametrize(("now", "awaiting", "state"), [
    # the set period is not over: watching, whatever has arrived
    (END - dt.timedelta(minutes=14), [], "watching"),
    (END - dt.timedelta(seconds=1), ["Read latency"], "watching"),
    # over, and every guard has a point after the step: judged at once
    (END, [], "over"),
    (END + dt.timedelta(minutes=3), [], "over"),
    # over, but a guard has no point after the step yet: wait for it within the grace
    (END, ["Read latency"], "awaiting_data"),
    (END + dt.timedelta(minutes=14, seconds=59), ["Read latency", "Scheduler latch wait"], "awaiting_data"),
    # the grace is over: judged as it is (the guard without data trips)
    (END + dt.timedelta(minutes=15), ["Read latency"], "over"),
    (END + dt.timedelta(hours=2), ["Read latency"], "over"),
])
def test_the_watch_ends_at_the_later_of_its_period_and_the_guards_data_within_the_grace(
        now: dt.datetime, awaiting: list[str], state: str) -> None:
    assert watch_state(now, END, awaiting) == state


def test_a_short_set_period_still_waits_for_the_data() -> None:
    # a test server's 20 s watch: over at 12:00:20 by the clock, but the first minute after the step is not stored
    applied = dt.datetime(2026, 11, 2, 12, 0, 30, tzinfo=dt.UTC)
    until = applied + dt.timedelta(seconds=20)
    assert watch_state(until, until, ["Write latency"]) == "awaiting_data"
    assert watch_state(until + dt.timedelta(seconds=70), until, []) == "over"


@pytest.mark.parametrize(("windows", "waiting"), [
    # points before and after: nothing to wait for
    ([("Read latency", [2.0, 2.1], [2.2])], []),
    # points before, none after yet: late data can still come and change the verdict
    ([("Read latency", [2.0], []), ("Write latency", [1.0], [1.1])], ["Read latency"]),
    # no points before the step: no later point can make it judgeable (it trips at once: never judged blind)
    ([("Scheduler latch wait", [], [])], []),
    # read only in the advice run (None): shown as not judged, not waited for
    ([("Counted IOPS", None, [])], []),
    ([("Read latency", [2.0], []), ("Scheduler latch wait", [0.5], []), ("Counted IOPS", None, [])],
     ["Read latency", "Scheduler latch wait"]),
])
def test_only_guards_with_data_before_and_none_after_are_waited_for(
        windows: list[tuple[str, list[float] | None, list[float]]], waiting: list[str]) -> None:
    assert awaiting_data(windows) == waiting


def test_past_the_grace_a_guard_without_data_after_the_step_stops_the_run() -> None:
    assert watch_state(END + WATCH_GRACE, END, awaiting_data([("Read latency", [2.0], [])])) == "over"
    reading = judge(READ_LATENCY, ["vol-1"], before=2.0, after=None, last_week=None)
    assert reading.tripped is True
    assert "no data after the step; a step is not judged blind" in reading.verdict
