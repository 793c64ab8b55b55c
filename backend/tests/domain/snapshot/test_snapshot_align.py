"""Series of different periods put on the window's grid (headroom.domain.snapshot.align, docs/series-alignment.md).

CloudWatch delivers AWS/EBS at 1 minute and AWS/EC2 at 5 minutes on basic monitoring, EBSIOBalance% /
EBSByteBalance% only at 5 minutes (docs/reference/cloudwatch.md#volume-metrics, docs/reference/cloudwatch.md#instance-ebs-metrics); rates are Sum / period (docs/reference/cloudwatch.md#volume-metrics: `IOPS = Sum /
period_seconds`).
"""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest
from headroom.domain.snapshot.align import align, method_of

T0 = dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)
NAN = math.nan


def _grid(
    values: list[float],
    step: int,
    statistic: str,
    *,
    grid_step: int = 60,
    points: int = 10,
    start: dt.datetime = T0,
    grid_start: dt.datetime = T0,
) -> list[float | None]:
    out = align(
        values,
        start=start,
        step_seconds=step,
        statistic=statistic,
        grid_start=grid_start,
        grid_step_seconds=grid_step,
        points=points,
    )
    assert out.shape == (points,)
    return [None if math.isnan(x) else round(float(x), 6) for x in out]


@pytest.mark.parametrize(
    ("statistic", "method"),
    [
        ("Sum", "sum"),
        ("Average", "mean"),
        ("Minimum", "min"),
        ("Maximum", "max"),
        ("p99", "max"),
        ("rate", "mean"),
        ("gauge", "mean"),
        ("count", "mean"),
    ],
)
def test_each_statistic_has_one_method(statistic: str, method: str) -> None:
    # "count" in the registry is node.cpu_count (a number of CPUs): a level, never added up over time.
    assert method_of(statistic) == method


def test_a_coarser_sum_is_spread_evenly_keeping_its_rate_and_total() -> None:
    # Two 5-minute Sums of 300 and 600 reads: 1 read/s then 2 reads/s (docs/reference/cloudwatch.md#volume-metrics IOPS = Sum / period).
    # On a 1-minute grid each minute holds 300/5 = 60 and 600/5 = 120: 60/60 = 1/s and 120/60 = 2/s.
    got = _grid([300.0, 600.0], 300, "Sum")
    assert got == [60.0] * 5 + [120.0] * 5
    assert sum(x for x in got if x is not None) == 900.0  # totals preserved


def test_a_coarser_level_is_held_across_its_period() -> None:
    # EBSByteBalance% Minimum at 5 minutes: 80 then 0; each minute of a period reads the period's value.
    assert _grid([80.0, 0.0], 300, "Minimum") == [80.0] * 5 + [0.0] * 5
    assert _grid([1.5, 2.5], 300, "Average") == [1.5] * 5 + [2.5] * 5
    assert _grid([7.0, 9.0], 300, "Maximum") == [7.0] * 5 + [9.0] * 5


def test_finer_series_are_aggregated_by_statistic() -> None:
    minutes = [1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 10.0, 10.0, 10.0, 40.0]
    # Sum: 1+2+3+4+5 = 15 and 10x4+40 = 80 per 5-minute step.
    assert _grid(minutes, 60, "Sum", grid_step=300, points=2) == [15.0, 80.0]
    # Minimum / Maximum: the lowest / highest minute; Average: the mean (15/5 = 3, 80/5 = 16).
    assert _grid(minutes, 60, "Minimum", grid_step=300, points=2) == [1.0, 10.0]
    assert _grid(minutes, 60, "Maximum", grid_step=300, points=2) == [5.0, 40.0]
    assert _grid(minutes, 60, "Average", grid_step=300, points=2) == [3.0, 16.0]


def test_gaps_stay_gaps() -> None:
    # A missing 5-minute period leaves its five minutes empty, for Sums and levels alike.
    assert _grid([300.0, NAN], 300, "Sum") == [60.0] * 5 + [None] * 5
    assert _grid([NAN, 50.0], 300, "Minimum") == [None] * 5 + [50.0] * 5
    # Finer: a 5-minute step with no minute present is a gap.
    assert _grid([NAN] * 5 + [1.0] * 5, 60, "Sum", grid_step=300, points=2) == [None, 5.0]


def test_a_partly_missing_finer_sum_takes_the_rate_of_what_is_present() -> None:
    # Minutes 60, 60, gap, 60, 60 reads: 1 read/s where known; the 5-minute step reads 1/s x 300 s = 300
    # (not 240, which would report 0.8/s for a volume that never went below 1/s).
    assert _grid([60.0, 60.0, NAN, 60.0, 60.0], 60, "Sum", grid_step=300, points=1) == [300.0]


def test_series_before_and_after_the_window_contribute_only_their_overlap() -> None:
    # The window starts at 12:02 on a 1-minute grid; the 5-minute series starts at 12:00 (its boundary).
    # 12:02-12:04 lie in the first period (Sum 300 -> 60 a minute), 12:05-12:09 in the second (600 -> 120),
    # 12:10-12:11 in the third, which the series lacks (partial last period not delivered yet): gaps.
    got = _grid([300.0, 600.0], 300, "Sum", grid_start=T0 + dt.timedelta(minutes=2))
    assert got == [60.0] * 3 + [120.0] * 5 + [None] * 2


def test_a_window_step_straddling_two_periods_is_time_weighted() -> None:
    # Window 12:03 + 5-minute steps over a 5-minute series from 12:00: the step 12:03-12:08 holds 2 minutes of
    # the first period (1 read/s) and 3 of the second (2 reads/s): (2x60x1 + 3x60x2) = 480 reads.
    got = _grid(
        [300.0, 600.0, 600.0], 300, "Sum", grid_step=300, points=2, grid_start=T0 + dt.timedelta(minutes=3)
    )
    assert got == [480.0, 600.0]
    # The same for a level: (2 x 10 + 3 x 20) / 5 = 16; Minimum takes the lower of the two periods.
    assert _grid(
        [10.0, 20.0, 20.0], 300, "Average", grid_step=300, points=2, grid_start=T0 + dt.timedelta(minutes=3)
    ) == [16.0, 20.0]
    assert _grid(
        [10.0, 20.0, 20.0], 300, "Minimum", grid_step=300, points=2, grid_start=T0 + dt.timedelta(minutes=3)
    ) == [10.0, 20.0]


def test_the_same_step_and_start_is_the_series_itself() -> None:
    values = [1.0, NAN, 3.0]
    got = align(
        values, start=T0, step_seconds=60, statistic="Sum", grid_start=T0, grid_step_seconds=60, points=5
    )
    assert np.array_equal(got, np.array([1.0, NAN, 3.0, NAN, NAN]), equal_nan=True)
