"""Burst-bucket forecasts. Expected numbers from docs/reference/gp2-burst.md#the-credit-bucket (AWS "General Purpose SSD volumes": 5.4 M credits,
baseline 3 IOPS/GiB, burst 3,000, `duration = credits / (3000 - baseline)`, refill from empty = 5.4e6 /
baseline), docs/reference/ebs-volume-types.md#limits-per-volume-type, docs/reference/gp2-burst.md#st1-and-sc1-throughput-credits (st1: 40 MiB/s per TiB baseline, 250 burst, 1 TiB of credits per TiB), docs/reference/ec2-ebs-limits.md#the-burst-rule, docs/reference/ec2-ebs-limits.md#limits-table
(m5.2xlarge: 12,000 / 18,750 IOPS, the maximum "for 30 minutes"), and docs/reference/gp2-burst.md#burst-time-from-cloudwatch (KloudDB, "Understanding Database IOPS – Part 1":
500 GB at BurstBalance 100 and 3,000 IOPS -> 3,600 s; `credit*5400000/100/(3000-500*3)`)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from headroom.domain.forecast.burst import (
    forecast_gp2_burst,
    forecast_hdd_burst,
    forecast_instance_burst,
    theil_sen_slope,
)
from headroom.domain.physics.burst import Gp2Bucket
from hypothesis import given, settings
from hypothesis import strategies as st

NOW = datetime(2026, 1, 5, 15, 0, tzinfo=UTC)
STEP = 60


def flat(value: float, n: int = 60) -> np.ndarray:
    return np.full(n, float(value))


@pytest.mark.parametrize(
    ("size_gib", "balance_pct", "demand_iops", "expected_s", "source"),
    [
        (500, 100, 3000, 3600, "gp2-burst.md#burst-time-from-cloudwatch: 5.4e6 / (3000 - 1500)"),
        (500, 50, 3000, 1800, "gp2-burst.md#burst-time-from-cloudwatch: 50 * 5.4e6 / 100 / 1500"),
        (100, 100, 3000, 2000, "docs/reference/gp2-burst.md#worked-durations table: 100 GiB"),
        (33, 100, 3000, 1862, "docs/reference/gp2-burst.md#worked-durations table: <= 33.33 GiB, 5.4e6 / 2900"),
        (334, 100, 3000, 2703, "docs/reference/gp2-burst.md#worked-durations table: 334 GiB"),
        (750, 100, 3000, 7200, "docs/reference/gp2-burst.md#worked-durations table: 750 GiB"),
        (500, 100, 2250, 7200, "docs/reference/gp2-burst.md#the-credit-bucket formula at 2,250 IOPS: 5.4e6 / 750"),
        (500, 100, 5000, 3600, "docs/reference/gp2-burst.md#the-credit-bucket: bursts only to 3,000 IOPS, so 5,000 drains like 3,000"),
    ],
)
def test_gp2_seconds_to_empty_table(
    size_gib: float, balance_pct: float, demand_iops: float, expected_s: float, source: str
) -> None:
    # one balance sample (the latest): no slope to cross-check, the physics alone
    balance = np.array([balance_pct], dtype=float)
    f = forecast_gp2_burst(balance, flat(demand_iops), size_gib=size_gib, step_seconds=STEP, now=NOW)
    assert f.seconds_to_empty == pytest.approx(expected_s, abs=0.5), source
    assert f.slope_agrees is None
    assert f.empties_at is not None
    assert (f.empties_at - NOW).total_seconds() == pytest.approx(expected_s, abs=0.5)
    # constant demand: the p50/p90 band collapses on the point
    assert f.seconds_to_empty_low == pytest.approx(expected_s, abs=0.5)
    assert f.seconds_to_empty_high == pytest.approx(expected_s, abs=0.5)


@pytest.mark.parametrize(
    ("size_gib", "demand_iops"),
    [
        (500, 1500),  # at the baseline (3 x 500, docs/reference/gp2-burst.md#the-credit-bucket): credits are earned as fast as spent
        (500, 800),  # below the baseline
        (100, 300),  # 100 GiB baseline is 300 IOPS (docs/reference/gp2-burst.md#worked-durations table)
        (1000, 3000),  # >= 1,000 GiB: baseline >= 3,000, no burst ("n/a" in the docs/reference/gp2-burst.md#worked-durations table)
        (2000, 9000),  # no bucket: demand above 6,000 is simply not served, nothing empties
    ],
)
def test_gp2_never_empties(size_gib: float, demand_iops: float) -> None:
    f = forecast_gp2_burst(flat(100), flat(demand_iops), size_gib=size_gib, step_seconds=STEP, now=NOW)
    assert f.seconds_to_empty is None
    assert f.empties_at is None
    assert f.seconds_to_empty_high is None


@pytest.mark.parametrize(
    ("size_gib", "fallback_iops", "refill_s"),
    [
        (33, 100, 54000),  # docs/reference/gp2-burst.md#worked-durations table: 100 IOPS, refill 54,000 s
        (100, 300, 18000),  # docs/reference/gp2-burst.md#worked-durations table
        (334, 1002, 5389),  # docs/reference/gp2-burst.md#worked-durations table
        (500, 1500, 3600),  # 5.4e6 / 1,500
        (750, 2250, 2400),  # docs/reference/gp2-burst.md#worked-durations table
    ],
)
def test_gp2_fallback_and_refill_from_empty(size_gib: float, fallback_iops: float, refill_s: float) -> None:
    # Demand above baseline for the last hour, idle for the rest of the day: off-peak (p10) demand is 0.
    demand = np.concatenate([np.zeros(23 * 60), np.full(60, 3000.0)])
    f = forecast_gp2_burst(flat(100, len(demand)), demand, size_gib=size_gib, step_seconds=STEP, now=NOW)
    assert f.fallback_iops == fallback_iops
    assert f.off_peak_demand == 0.0
    assert f.refill_seconds == pytest.approx(refill_s, abs=1.0)


def test_refill_at_off_peak_demand() -> None:
    # 500 GiB, off-peak 900 IOPS: net earn 1,500 - 900 = 600 credits/s, 5.4e6 / 600 = 9,000 s (docs/reference/gp2-burst.md#the-credit-bucket model).
    demand = np.concatenate([np.full(23 * 60, 900.0), np.full(60, 3000.0)])
    f = forecast_gp2_burst(flat(100, len(demand)), demand, size_gib=500, step_seconds=STEP, now=NOW)
    assert f.off_peak_demand == pytest.approx(900.0)
    assert f.refill_seconds == pytest.approx(9000.0)
    # off-peak above the baseline never refills
    g = forecast_gp2_burst(flat(100), flat(2000), size_gib=500, step_seconds=STEP, now=NOW)
    assert g.refill_seconds is None


def test_already_empty() -> None:
    f = forecast_gp2_burst(flat(0), flat(1500), size_gib=500, step_seconds=STEP, now=NOW)
    assert f.empty_now
    assert f.seconds_to_empty == 0.0
    assert f.empties_at == NOW
    assert f.fallback_iops == 1500  # docs/reference/gp2-burst.md#baseline-and-burst: 3 IOPS/GiB
    assert f.path.percent[0] == 0.0


def test_band_from_demand_distribution() -> None:
    # Half the hour at 2,000 IOPS, half at 3,000 (500 GiB, baseline 1,500): mean 2,500, p50 2,500, p90 3,000.
    demand = np.array([2000.0, 3000.0] * 30)
    f = forecast_gp2_burst(flat(100), demand, size_gib=500, step_seconds=STEP, now=NOW)
    assert f.demand == pytest.approx(2500.0)
    assert f.demand_high == pytest.approx(3000.0)
    assert f.seconds_to_empty == pytest.approx(5.4e6 / 1000.0)  # 5,400 s
    assert f.seconds_to_empty_low == pytest.approx(5.4e6 / 1500.0)  # 3,600 s at p90
    assert f.empties_at_earliest == NOW + timedelta(seconds=3600)
    assert f.seconds_to_empty_low <= f.seconds_to_empty <= f.seconds_to_empty_high  # type: ignore[operator]


def _physics_balance(size_gib: float, demand: float, start_pct: float, n: int) -> np.ndarray:
    bucket = Gp2Bucket.for_size(size_gib)
    b = bucket.credits_from_percent(start_pct)
    out = []
    for _ in range(n):
        b, _ = bucket.step(b, demand, STEP)
        out.append(bucket.percent(b))
    return np.array(out)


def test_slope_cross_check_agrees_with_physics() -> None:
    # Balance falling as the bucket would at 2,500 IOPS (500 GiB): net 1,000 credits/s = 1.11 %/min.
    bal = np.round(_physics_balance(500, 2500, 90.0, 60), 0)  # whole percent, as Nitro reports (docs/reference/cloudwatch.md#instance-ebs-metrics)
    f = forecast_gp2_burst(bal, flat(2500), size_gib=500, step_seconds=STEP, now=NOW)
    assert f.slope_percent_per_hour == pytest.approx(-1000 * 3600 / 5.4e6 * 100, rel=0.05)
    assert f.slope_agrees is True
    assert f.seconds_to_empty == pytest.approx(bal[-1] / 100 * 5.4e6 / 1000.0)
    # falling since the window's first sample (or before): the whole hour is the drain
    assert "over the last 1 h" in f.method


def test_slope_cross_check_widens_band_when_it_disagrees() -> None:
    # The balance falls 3x as fast as the counted demand explains (net 1,500 credits/s at 3,000 IOPS vs
    # 500 at 2,000): the band must reach the observed estimate.
    bal = _physics_balance(500, 3000, 100.0, 50)
    f = forecast_gp2_burst(bal, flat(2000, 50), size_gib=500, step_seconds=STEP, now=NOW)
    assert f.slope_agrees is False
    assert f.slope_seconds_to_empty is not None
    assert f.slope_seconds_to_empty == pytest.approx(bal[-1] / 100 * 5.4e6 / 1500.0, rel=0.02)
    assert f.seconds_to_empty_low == pytest.approx(f.slope_seconds_to_empty)
    assert f.seconds_to_empty == pytest.approx(bal[-1] / 100 * 5.4e6 / 500.0)
    assert "widened" in f.method


def test_path_drains_to_zero_then_stays() -> None:
    f = forecast_gp2_burst(flat(100), flat(3000), size_gib=500, step_seconds=STEP, now=NOW)
    assert f.path.timestamps[0] == NOW
    assert f.path.percent[0] == 100.0
    p = np.array(f.path.percent)
    assert np.all(np.diff(p) <= 1e-9)
    # 1,500 credits/s net: 100 % -> 0 in 3,600 s; the horizon is 2 x 3,600 s, the second half at 0.
    t = np.array([(ts - NOW).total_seconds() for ts in f.path.timestamps])
    assert p[t >= 3600].max() == 0.0
    assert p[t <= 1800].min() > 0.0
    assert p[np.searchsorted(t, 1800)] == pytest.approx(50.0, abs=0.5)


def test_missing_balance_assumes_full() -> None:
    f = forecast_gp2_burst(np.full(60, np.nan), flat(3000), size_gib=500, step_seconds=STEP, now=NOW)
    assert f.balance_percent == 100.0
    assert f.seconds_to_empty == pytest.approx(3600)
    assert f.notes


def test_gaps_use_last_finite_balance() -> None:
    bal = flat(50)
    bal[-5:] = np.nan
    f = forecast_gp2_burst(bal, flat(3000), size_gib=500, step_seconds=STEP, now=NOW)
    assert f.balance_percent == 50.0
    assert f.seconds_to_empty == pytest.approx(1800)


def test_st1_bucket() -> None:
    # st1, 1 TiB: baseline 40 MiB/s, burst 250 MiB/s, 1 TiB = 1,048,576 MiB of credits (docs/reference/ebs-volume-types.md#limits-per-volume-type, docs/reference/gp2-burst.md#st1-and-sc1-throughput-credits):
    # 1,048,576 / (250 - 40) = 4,993.2 s; refill from empty at idle = 1,048,576 / 40 = 26,214.4 s.
    demand = np.concatenate([np.zeros(23 * 60), np.full(60, 250.0)])
    f = forecast_hdd_burst(
        flat(100, len(demand)), demand, volume_type="st1", size_gib=1024, step_seconds=STEP, now=NOW
    )
    assert f.unit == "MiB/s"
    assert f.seconds_to_empty == pytest.approx(1_048_576 / 210, abs=0.5)
    assert f.fallback_mibps == pytest.approx(40.0)
    assert f.refill_seconds == pytest.approx(1_048_576 / 40, abs=0.5)


def test_instance_io_bucket_thirty_minutes() -> None:
    # m5.2xlarge (docs/reference/ec2-ebs-limits.md#limits-table): 12,000 / 18,750 IOPS, asterisk size; docs/reference/ec2-ebs-limits.md#the-burst-rule "maximum performance for 30 minutes".
    f = forecast_instance_burst(
        flat(100), flat(18750), instance_type="m5.2xlarge", kind="io", step_seconds=STEP, now=NOW
    )
    assert f.kind == "instance-io"
    assert f.seconds_to_empty == pytest.approx(1800)
    assert f.fallback_iops == 12000
    never = forecast_instance_burst(
        flat(100), flat(12000), instance_type="m5.2xlarge", kind="io", step_seconds=STEP, now=NOW
    )
    assert never.seconds_to_empty is None


def test_instance_byte_bucket() -> None:
    # m5.2xlarge bandwidth 287.5 / 593.75 MB/s (docs/reference/ec2-ebs-limits.md#limits-table) = 274.18 / 566.24 MiB/s: 30 min at the maximum.
    f = forecast_instance_burst(
        flat(100),
        flat(566.2441253662109),
        instance_type="m5.2xlarge",
        kind="byte",
        step_seconds=STEP,
        now=NOW,
    )
    assert f.unit == "MiB/s"
    assert f.seconds_to_empty == pytest.approx(1800)
    assert f.fallback_mibps == pytest.approx(287.5e6 / 2**20)


def test_rejects_bad_inputs() -> None:
    with pytest.raises(ValueError, match="time zone"):
        forecast_gp2_burst(flat(100), flat(3000), size_gib=500, step_seconds=STEP, now=datetime(2026, 1, 5))
    with pytest.raises(ValueError, match="step_seconds"):
        forecast_gp2_burst(flat(100), flat(3000), size_gib=500, step_seconds=0, now=NOW)
    with pytest.raises(ValueError, match="finite"):
        forecast_gp2_burst(flat(100), np.full(60, np.nan), size_gib=500, step_seconds=STEP, now=NOW)


def test_theil_sen_slope_is_robust_to_an_outlier() -> None:
    t = np.arange(10.0)
    y = 2.0 * t + 1.0
    y[3] = 100.0
    assert theil_sen_slope(t, y) == pytest.approx(2.0)
    assert theil_sen_slope(t[:1], y[:1]) is None


def _inf(x: float | None) -> float:
    return math.inf if x is None else x


demands = st.lists(st.floats(min_value=0, max_value=6000, allow_nan=False), min_size=1, max_size=90)


@settings(max_examples=60, deadline=None)
@given(
    demand=demands,
    balance=st.floats(min_value=0, max_value=100),
    size=st.sampled_from([20, 100, 300, 500, 900]),
)
def test_band_contains_point(demand: list[float], balance: float, size: int) -> None:
    f = forecast_gp2_burst(
        np.full(len(demand), balance), np.array(demand), size_gib=size, step_seconds=STEP, now=NOW
    )
    assert _inf(f.seconds_to_empty_low) <= _inf(f.seconds_to_empty) <= _inf(f.seconds_to_empty_high)
    assert f.demand_low <= f.demand <= f.demand_high
    assert all(0.0 <= p <= 100.0 for p in f.path.percent)


@settings(max_examples=60, deadline=None)
@given(
    demand=demands,
    extra=st.floats(min_value=0, max_value=3000),
    balance=st.floats(min_value=0, max_value=100),
    size=st.sampled_from([20, 100, 300, 500, 900]),
)
def test_more_demand_never_empties_later(
    demand: list[float], extra: float, balance: float, size: int
) -> None:
    base = np.array(demand)
    a = forecast_gp2_burst(np.full(len(base), balance), base, size_gib=size, step_seconds=STEP, now=NOW)
    b = forecast_gp2_burst(
        np.full(len(base), balance), base + extra, size_gib=size, step_seconds=STEP, now=NOW
    )
    assert _inf(b.seconds_to_empty) <= _inf(a.seconds_to_empty)
    assert _inf(b.seconds_to_empty_low) <= _inf(a.seconds_to_empty_low)
    assert _inf(b.seconds_to_empty_high) <= _inf(a.seconds_to_empty_high)


def test_rising_demand_is_extrapolated() -> None:
    # 500 GiB (baseline 1,500, burst 3,000, 5.4e6 credits; docs/reference/gp2-burst.md#the-credit-bucket), full, demand ramping 15 IOPS/min up to 2,385.
    # Along the ramp (0.25 IOPS/s from ~2,400) the drain is 900 + 0.25 t until 3,000 at t = 2,400 s
    # (2.88e6 credits), then 1,500/s for the remaining 2.52e6: 1,680 s. Total 4,080 s, versus
    # 5.4e6 / (1,942.5 − 1,500) = 12,203 s at the hour's mean.
    demand = 1500.0 + 15.0 * np.arange(60)
    f = forecast_gp2_burst(np.array([100.0]), demand, size_gib=500, step_seconds=STEP, now=NOW)
    assert f.seconds_to_empty == pytest.approx(4080, abs=90)
    assert f.seconds_to_empty_high == pytest.approx(5.4e6 / (1942.5 - 1500))  # at the p50 demand
    assert f.demand == pytest.approx(demand.mean())
    assert "trend" in f.method


def test_yesterdays_profile_predicts_the_afternoon_peak() -> None:
    # 25 h at 1-minute steps: 1,000 IOPS (below the 1,500 baseline) except, yesterday, 3,000 IOPS for 2 h
    # starting 30 min after the time of day it is now. The bucket (full) empties 30 min + 5.4e6 / 1,500 =
    # 1,800 + 3,600 = 5,400 s from now; the recent hour alone says never.
    demand = np.full(1500, 1000.0)
    demand[90:210] = 3000.0
    f = forecast_gp2_burst(np.full(1500, 100.0), demand, size_gib=500, step_seconds=STEP, now=NOW)
    assert f.seconds_to_empty == pytest.approx(5400.0)
    assert f.seconds_to_empty_high is None  # the constant recent demand never empties it
    assert "yesterday" in f.method
    # the charted path follows the profile: full for the first 30 min, then falling
    p = np.array(f.path.percent)
    t = np.array([(ts - NOW).total_seconds() for ts in f.path.timestamps])
    assert p[t <= 1800].min() == 100.0
    assert p[(t >= 5400) & (t <= 9000)].max() == 0.0  # empty until the 2-hour peak ends at 9,000 s
    assert p[-1] > 0.0  # then refilling at 1,000 IOPS (500 credits/s below the baseline)


def test_profile_ignores_samples_served_while_yesterdays_bucket_was_empty() -> None:
    # 500 GiB at 2,000 IOPS (net 500 credits/s): 5.4e6 / 500 = 10,800 s from full (docs/reference/gp2-burst.md#the-credit-bucket formula). Yesterday
    # the bucket was empty for 2 h from 30 min after this time of day, so the volume served its 1,500 IOPS
    # baseline: that is a clipped figure, not the demand. Read as demand it would add 2 h of no drain
    # (18,000 s); the profile must replace it with the recent trend (2,000 IOPS).
    demand = np.full(1500, 2000.0)
    balance = np.full(1500, 100.0)
    demand[90:210] = 1500.0
    balance[90:210] = 0.0
    f = forecast_gp2_burst(balance, demand, size_gib=500, step_seconds=STEP, now=NOW)
    assert f.balance_percent == 100.0
    assert f.seconds_to_empty == pytest.approx(10800.0)


# --- A burst that started inside the last hour (an instance bucket on its first day) ----------------------
# m6i.xlarge (docs/reference/ec2-ebs-limits.md#limits-table): 1,250 / 10,000 Mbps = 156.25 / 1,250 MB/s = 149.01 / 1,192.09 MiB/s, an asterisk
# size: the maximum "for 30 minutes at least once every 24 hours" (docs/reference/ec2-ebs-limits.md#the-burst-rule). The bucket
# (headroom.domain.physics.burst) holds 1,800 s x (1,192.09 - 149.01) = 1,877,544 MiB. AWS/EC2 basic monitoring
# delivers EBSReadBytes/EBSWriteBytes as 300 s Sums and EBSByteBalance% as a 5-minute percentage (docs/reference/cloudwatch.md#instance-ebs-metrics).
M6I_XL_BASE = 156.25e6 / 2**20
M6I_XL_MAX = 1250e6 / 2**20
M6I_XL_CAPACITY = 1800.0 * (M6I_XL_MAX - M6I_XL_BASE)
BATCH_MIBPS = 400.0  # a scan batch: 400 - 149.01 = 250.99 MiB/s drain, 75,297 MiB = 4.01 % per 5 minutes


def _batch_started(minutes_ago: int, step: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (EBSByteBalance %, MiB/s) per `step` for the last hour: 140 MiB/s (below the 149 MiB/s baseline,
    the bucket full) until a batch at 400 MiB/s started `minutes_ago`; the balance as the bucket holds it at
    the end of each step, in whole percent (Nitro, docs/reference/cloudwatch.md#instance-ebs-metrics)."""
    n, k = 3600 // step, minutes_ago * 60 // step
    demand = np.full(n, 140.0)
    demand[n - k :] = BATCH_MIBPS
    drained = (BATCH_MIBPS - M6I_XL_BASE) * step * np.arange(1, k + 1) / M6I_XL_CAPACITY * 100.0
    balance = np.full(n, 100.0)
    balance[n - k :] = np.round(100.0 - drained)
    return balance, demand


@pytest.mark.parametrize(
    ("step", "source"),
    [
        (300, "AWS/EC2 basic monitoring: 12 points of 5 minutes in the hour"),
        (
            60,
            "the same series on the advisor's 1-minute window: each 5-minute value held for its five minutes",
        ),
    ],
)
def test_batch_started_20_min_ago_empties_at_the_batch_demand(step: int, source: str) -> None:
    # 20 min of the batch spent 4 x 4.01 % -> 84 % left (whole percent): 0.84 x 1,877,544 / 250.99 = 6,284 s.
    # A line through the whole hour (40 min at 140 MiB/s, 20 at 400) is no demand the bucket sees: it either
    # ignores the step (later, or never) or reads it as a ramp that climbs to the 1,192 MiB/s maximum (earlier).
    balance, demand = _batch_started(20, 300)
    if step == 60:
        balance, demand = np.repeat(balance, 5), np.repeat(demand, 5)
    assert balance[-1] == 84.0
    f = forecast_instance_burst(
        balance, demand, instance_type="m6i.xlarge", kind="byte", step_seconds=step, now=NOW
    )
    expected = 0.84 * M6I_XL_CAPACITY / (BATCH_MIBPS - M6I_XL_BASE)
    assert expected == pytest.approx(6284.0, abs=1.0)
    assert f.seconds_to_empty == pytest.approx(expected, rel=0.01), source
    assert f.demand == pytest.approx(BATCH_MIBPS)  # the demand that drains the bucket, not the hour's mean
    assert "since the balance began to fall" in f.method
    # the band still says "never" at the hour's median (140 MiB/s, the batch may stop) and reaches the point
    assert f.seconds_to_empty_high is None
    assert f.seconds_to_empty_low == pytest.approx(expected, rel=0.01)


def test_batch_with_detailed_monitoring_demand() -> None:
    # Detailed monitoring: the Sums every minute, the balance still every 5 minutes (docs/reference/cloudwatch.md#instance-ebs-metrics "Basic monitoring
    # only"), held on the 1-minute grid. The batch started 22 minutes ago (inside a 5-minute balance period).
    balance5, _ = _batch_started(20, 300)
    balance = np.repeat(balance5, 5)
    demand = np.full(60, 140.0)
    demand[-22:] = BATCH_MIBPS
    f = forecast_instance_burst(
        balance, demand, instance_type="m6i.xlarge", kind="byte", step_seconds=60, now=NOW
    )
    assert f.seconds_to_empty == pytest.approx(0.84 * M6I_XL_CAPACITY / (BATCH_MIBPS - M6I_XL_BASE), rel=0.01)


def _gp2_rounded_balance(demand: np.ndarray, size_gib: float = 500) -> np.ndarray:
    """BurstBalance as a full gp2 bucket holds it at the end of each minute of `demand`, in whole percent."""
    bucket = Gp2Bucket.for_size(size_gib)
    b, out = bucket.capacity, []
    for d in demand:
        b, _ = bucket.step(b, float(d), STEP)
        out.append(round(bucket.percent(b)))
    return np.array(out, dtype=float)


def test_a_step_seen_for_less_than_three_balance_periods_is_the_floor() -> None:
    # 500 GiB gp2 (baseline 1,500, burst 3,000, 5.4 M credits; docs/reference/gp2-burst.md#the-credit-bucket): 1,000 IOPS for 50 min, then 3,000 for
    # the last 10 (1,500 credits/s, 1.67 % a minute): 83 % left. Ten minutes are fewer than three 5-minute
    # periods, too few to fit a line to, but the drain since the balance began to fall is the floor of the
    # projection: 0.83 x 5.4e6 / 1,500 = 2,988 s. A line through the hour (50 min at 1,000) says never.
    demand = np.full(60, 1000.0)
    demand[-10:] = 3000.0
    balance = _gp2_rounded_balance(demand)
    assert balance[-1] == 83.0 and balance[-11] == 100.0
    f = forecast_gp2_burst(balance, demand, size_gib=500, step_seconds=STEP, now=NOW)
    assert f.seconds_to_empty == pytest.approx(0.83 * 5.4e6 / 1500.0, rel=0.01)
    assert f.demand == pytest.approx(3000.0)
    assert "at least its mean since the balance began to fall" in f.method


def test_a_ramp_that_just_began_to_drain_keeps_the_hours_trend() -> None:
    # A ramp of 15 IOPS/min crossing the 1,500 IOPS baseline 20 minutes ago (500 GiB gp2): BurstBalance
    # leaves 100 % only when 0.5 % (27,000 credits) is spent, ~8 min later. The few minutes since are no
    # regime of their own; the line through the hour (the ramp) is the projection, as without a balance history.
    demand = 1500.0 + 15.0 * (np.arange(60) - 40.0)
    balance = _gp2_rounded_balance(demand)
    assert balance[-1] == 97.0 and balance[-13] == 100.0 and balance[-12] == 99.0  # falling for 12 minutes
    hour = forecast_gp2_burst(np.array([balance[-1]]), demand, size_gib=500, step_seconds=STEP, now=NOW)
    f = forecast_gp2_burst(balance, demand, size_gib=500, step_seconds=STEP, now=NOW)
    assert "over the last 1 h" in hour.method
    assert hour.seconds_to_empty is not None
    assert f.seconds_to_empty == pytest.approx(hour.seconds_to_empty, rel=0.01)
    assert "at least its mean since the balance began to fall (12 min ago)" in f.method
    assert f.demand == pytest.approx(
        demand[-12:].mean()
    )  # since the balance began to fall: above the baseline


def test_a_ramp_seen_draining_for_half_an_hour_is_still_extrapolated() -> None:
    # The same ramp crossing the baseline 40 minutes ago: the line fitted since the balance began to fall is the
    # same line (15 IOPS/min), so the forecast matches the hour's.
    demand = 1500.0 + 15.0 * (np.arange(60) - 20.0)
    balance = _gp2_rounded_balance(demand)
    hour = forecast_gp2_burst(np.array([balance[-1]]), demand, size_gib=500, step_seconds=STEP, now=NOW)
    f = forecast_gp2_burst(balance, demand, size_gib=500, step_seconds=STEP, now=NOW)
    assert hour.seconds_to_empty is not None
    assert f.seconds_to_empty == pytest.approx(hour.seconds_to_empty, rel=0.01)
    assert "since the balance began to fall" in f.method
