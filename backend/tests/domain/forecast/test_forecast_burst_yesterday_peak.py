"""A gp2 volume that emptied at yesterday's peak empties at today's, whatever the quiet hour before it says.

Built from AWS's documentation, not from the forecast's output (docs/reference/gp2-burst.md#the-credit-bucket;
https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html#EBSVolumeTypes_gp2): a gp2 volume of
S GiB earns 3 x S I/O credits a second (its baseline, at least 100), spends one per I/O, bursts to 3,000 IOPS
and holds at most 5.4 million credits; while its bucket is empty it serves its baseline, so CloudWatch's
VolumeReadOps + VolumeWriteOps show the baseline then, not the demand (and BurstBalance shows 0 %).

Three identical 200 GiB volumes (600 IOPS baseline) run the same day twice: 300 IOPS at night, 2,000 IOPS from
09:00 to 17:00. Each day the full bucket drains at 2,000 - 600 = 1,400 credits a second and empties after
5.4e6 / 1,400 = 3,857 s (64 min), then sits at 0 % until 17:00 (the issue's "balance at 0 % for hours"). It is
now 03:00 on the third day; the last hour of demand is the same as yesterday's for the first volume and 1 %
and 3 % lower for the other two. A quieter night says nothing about the coming peak: each forecast must say the
bucket empties about 6 h + 64 min from now, as the credit arithmetic says at yesterday's peak.
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from headroom.domain.forecast.burst import forecast_gp2_burst

STEP = 60  # CloudWatch's 1-minute points (detailed monitoring of EBS: docs/reference/cloudwatch.md)
SIZE_GIB = 200
BASELINE = 3 * SIZE_GIB  # IOPS: 3 per GiB
BURST = 3000.0
CAPACITY = 5.4e6  # credits
NIGHT, PEAK = 300.0, 2000.0
NOW = datetime(2026, 3, 3, 3, 0, tzinfo=UTC)
MINUTES = (2 * 24 + 3) * 60  # from 00:00 two days ago to 03:00 now


def true_demand(minute_of_day: int) -> float:
    return PEAK if 9 * 60 <= minute_of_day < 17 * 60 else NIGHT


def cloudwatch_view(last_hour_factor: float) -> tuple[np.ndarray, np.ndarray]:
    """What CloudWatch delivers: BurstBalance (%) at the end of each minute and the IOPS served in it."""
    balance, served = np.empty(MINUTES), np.empty(MINUTES)
    credits = CAPACITY
    for m in range(MINUTES):
        want = true_demand(m % 1440) * (last_hour_factor if m >= MINUTES - 60 else 1.0)
        rate = min(want, BURST)
        if rate > BASELINE and credits < (rate - BASELINE) * STEP:
            # the credits run out inside this minute: the burst rate until then, the baseline after
            until = credits / (rate - BASELINE)
            rate = (rate * until + BASELINE * (STEP - until)) / STEP
            credits = 0.0
        else:
            credits = min(CAPACITY, credits + (BASELINE - rate) * STEP)
        balance[m], served[m] = 100.0 * credits / CAPACITY, rate
    return balance, served


def seconds_to_empty_by_the_arithmetic(balance_pct: float) -> float:
    """From now on, yesterday's true demand: the first second the credits run out."""
    credits = CAPACITY * balance_pct / 100.0
    for k in range(1, 24 * 60 + 1):
        demand = min(true_demand((3 * 60 + k - 1) % 1440), BURST)
        net = demand - BASELINE
        if net > 0 and credits <= net * STEP:
            return (k - 1) * STEP + credits / net
        credits = min(CAPACITY, credits - net * STEP)
    raise AssertionError("the arithmetic says it never empties")


def test_the_days_are_shaped_as_the_issue_says() -> None:
    balance, served = cloudwatch_view(1.0)
    yesterday = slice(24 * 60, 48 * 60)
    at_zero = np.flatnonzero(balance[yesterday] <= 0.0)
    assert at_zero.size > 6 * 60, "the balance sat at 0 % for hours"
    assert at_zero[0] == pytest.approx(9 * 60 + 64, abs=1)  # 3,857 s after 09:00
    # CloudWatch shows the baseline, not the demand, from the first whole minute at 0 %
    assert served[yesterday][at_zero[1:]].max() == BASELINE
    assert balance[-1] == 100.0  # refilled overnight


@pytest.mark.parametrize("last_hour_factor", [1.0, 0.99, 0.97])
def test_a_quieter_last_hour_does_not_stop_the_peak_from_emptying_the_bucket(last_hour_factor: float) -> None:
    balance, served = cloudwatch_view(last_hour_factor)
    expected = seconds_to_empty_by_the_arithmetic(float(balance[-1]))
    assert expected == pytest.approx(6 * 3600 + 5.4e6 / (PEAK - BASELINE), rel=1e-3)
    f = forecast_gp2_burst(balance, served, size_gib=SIZE_GIB, step_seconds=STEP, now=NOW)
    assert f.seconds_to_empty is not None, f"never empties at {last_hour_factor:.0%} of yesterday's last hour: {f.method}"
    # within a few minutes of the arithmetic: the quiet hour moves the time by minutes, not to "never"
    assert f.seconds_to_empty == pytest.approx(expected, abs=10 * 60)
    assert f.seconds_to_empty_low is not None and f.seconds_to_empty_low <= f.seconds_to_empty
    assert f.from_daily_profile


def test_never_empties_needs_a_peak_that_is_really_lower() -> None:
    # The same volume, but yesterday's peak never came (300 IOPS all day, under the 600 baseline): the bucket
    # stayed full, and the forecast says it does not empty within the day.
    balance = np.full(MINUTES, 100.0)
    served = np.full(MINUTES, NIGHT)
    f = forecast_gp2_burst(balance, served, size_gib=SIZE_GIB, step_seconds=STEP, now=NOW)
    assert f.seconds_to_empty is None
