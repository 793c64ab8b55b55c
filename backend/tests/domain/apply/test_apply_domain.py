"""The pure parts of an apply plan: the maintenance window (UTC, weekdays, past midnight) and the guards'
thresholds (docs/thresholds/apply-guards.md)."""

from __future__ import annotations

import datetime as dt

import pytest
from headroom.domain.apply.guards import READ_LATENCY, SCHEDULER_WAIT, plan_guards, tripped
from headroom.domain.snapshot.labels import shown_scale
from headroom.domain.apply.run import judge
from headroom.domain.apply.plan import MaintenanceWindow
from headroom.domain.snapshot import metric_ids as mid
from pydantic import ValidationError

SAT = dt.datetime(2026, 11, 28, tzinfo=dt.UTC)  # a Saturday


@pytest.mark.parametrize(("at", "inside"), [
    (SAT.replace(hour=22), True),
    (SAT.replace(hour=21, minute=59), False),
    (SAT.replace(hour=23, minute=59), True),
    (SAT + dt.timedelta(days=1, hours=1, minutes=59), True),  # Sunday 01:59, the Saturday window's tail
    (SAT + dt.timedelta(days=1, hours=2), False),  # the end is exclusive
    (SAT + dt.timedelta(days=1, hours=22), False),  # Sunday night: not a listed day
    (SAT - dt.timedelta(hours=1), False),  # Friday 23:00
    (SAT.replace(hour=22).astimezone(dt.timezone(dt.timedelta(hours=9))), True),  # any zone, judged in UTC
])
def test_a_window_past_midnight_belongs_to_the_day_it_opens(at: dt.datetime, inside: bool) -> None:
    window = MaintenanceWindow(start="22:00", end="02:00", weekdays=["sat"])
    assert window.contains(at) is inside


def test_a_daytime_window() -> None:
    window = MaintenanceWindow(start="09:30", end="11:00", weekdays=["mon", "tue"])
    monday = SAT + dt.timedelta(days=2)
    assert window.contains(monday.replace(hour=9, minute=30))
    assert not window.contains(monday.replace(hour=11))
    assert not window.contains(SAT.replace(hour=10))


@pytest.mark.parametrize("fields", [
    {"start": "24:00", "end": "01:00", "weekdays": ["mon"]},
    {"start": "9:00", "end": "10:00", "weekdays": ["mon"]},
    {"start": "09:00", "end": "09:00", "weekdays": ["mon"]},
    {"start": "09:00", "end": "10:00", "weekdays": ["mon", "mon"]},
    {"start": "09:00", "end": "10:00", "weekdays": []},
])
def test_bad_windows_are_refused(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        MaintenanceWindow.model_validate(fields)


@pytest.mark.parametrize(("guard", "before", "after", "stops"), [
    (READ_LATENCY, 4.0, 6.0, False),  # exactly 1.5 x: not above
    (READ_LATENCY, 4.0, 6.1, False),  # above 1.5 x but under the 10 ms floor
    (READ_LATENCY, 8.0, 12.1, True),
    (READ_LATENCY, 12.0, 15.0, False),  # above the floor, under 1.5 x
    (SCHEDULER_WAIT, 6.0, 11.0, False),
    (SCHEDULER_WAIT, 6.0, 12.5, True),
    (READ_LATENCY, None, 3.0, True),  # no data before: blind, stop
    (READ_LATENCY, 3.0, None, True),  # no data after: blind, stop
])
def test_guards_trip_above_the_factor_and_the_floor(guard: object, before: float | None, after: float | None,
                                                    stops: bool) -> None:
    assert tripped(guard, before, after) is stops  # type: ignore[arg-type]


def test_the_finding_s_own_metric_comes_first() -> None:
    guards = plan_guards("derived.counted_iops")
    assert [g.metric for g in guards] == ["derived.counted_iops", "derived.read_latency_ms", "derived.write_latency_ms",
                                          "tikv.wait.scheduler_latch"]
    # named and measured as the series is drawn, not as the finding's impact says its figure
    assert (guards[0].label, guards[0].unit, guards[0].factor) == ("IOPS counted in 256 KiB units", "IOPS", 1.25)
    assert tripped(guards[0], 1000.0, 1300.0) and not tripped(guards[0], 1000.0, 1200.0)
    assert [g.metric for g in plan_guards(None)][0] == "derived.read_latency_ms"


def test_a_move_off_gp2_is_not_guarded_by_the_burst_balance_aws_stops_publishing() -> None:
    # gp2 -> gp3: the volume has no burst bucket after the step, so no BurstBalance to compare; the latencies judge it
    assert [g.metric for g in plan_guards(mid.EBS_BURST_BALANCE, burst_bucket_removed=True)] == [
        "derived.read_latency_ms", "derived.write_latency_ms", "tikv.wait.scheduler_latch"]
    assert plan_guards(mid.EBS_BURST_BALANCE)[0].metric == mid.EBS_BURST_BALANCE
    # only the burst balance goes: another finding metric still guards a volume type change
    assert plan_guards("derived.counted_iops", burst_bucket_removed=True)[0].metric == "derived.counted_iops"


def test_a_series_of_which_less_is_worse_trips_when_it_falls() -> None:
    hits = plan_guards(mid.TIKV_BLOCK_CACHE_HIT)[0]
    assert (hits.label, hits.unit, hits.worse_when) == ("Block cache hits", "ops/s", "lower")
    assert "below 0.8 times" in hits.rule
    assert tripped(hits, 1000.0, 700.0) and not tripped(hits, 1000.0, 850.0) and not tripped(hits, 1000.0, 5000.0)
    fell = judge(hits, ["s1"], before=1150.0, after=700.0, last_week=None)
    assert fell.tripped and fell.verdict.startswith("Block cache hits got worse: 1,150 ops/s before, 700 ops/s after")
    more = judge(hits, ["s1"], before=1000.0, after=1300.0, last_week=None)
    assert not more.tripped and more.verdict.startswith("Block cache hits improved")
    usual = judge(hits, ["s1"], before=1000.0, after=700.0, last_week=800.0)
    assert not usual.tripped and "fell" in usual.verdict and "held" in usual.verdict


@pytest.mark.parametrize(("stored", "shown", "factor"), [
    ("seconds", "ms", 1000.0), ("bytes", "GiB", 1 / 2**30), ("bytes/s", "MiB/s", 1 / 2**20), ("ops/s", "ops/s", 1.0),
])
def test_a_guard_reads_a_series_in_the_unit_it_is_drawn_in(stored: str, shown: str, factor: float) -> None:
    assert shown_scale(stored, shown) == factor
