"""A round's items start at a place that moves with the minute, so an overloaded round delays every item a little
instead of dropping the same ones every minute."""

from __future__ import annotations

import datetime as dt

from headroom.platform.jobs.context import rotated

T0 = dt.datetime(2026, 11, 30, 14, 0, tzinfo=dt.UTC)


def test_a_round_that_runs_under_half_its_items_reaches_every_item_within_a_few_minutes() -> None:
    items = list(range(1000))
    ran_at: dict[int, list[int]] = {i: [] for i in items}
    for m in range(120):
        order = rotated(items, T0 + dt.timedelta(minutes=m))
        assert sorted(order) == items  # every item once
        for i in order[:450]:  # the 45 % a saturated round ran in the 1,000-cluster load test
            ran_at[i].append(m)
    longest_wait = max(max(b - a for a, b in zip([-1, *runs], [*runs, 120], strict=True)) for runs in ran_at.values())
    assert longest_wait <= 5, longest_wait


def test_the_same_minute_gives_the_same_order_and_short_lists_stay() -> None:
    items = [f"c{i}" for i in range(37)]
    at = T0 + dt.timedelta(minutes=7, seconds=42)
    assert rotated(items, at) == rotated(items, at.replace(second=0))
    assert rotated([], at) == [] and rotated(["one"], at) == ["one"]
