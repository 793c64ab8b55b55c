"""Invariants of every credit bucket (hypothesis).

The balance stays in [0, capacity], demand at or below baseline never drains, served never exceeds demand or
the burst rate and never falls below the baseline share.
"""

from __future__ import annotations

import math

import pytest
from headroom.domain.catalog import instance_limits
from headroom.domain.physics.burst import CreditBucket, Gp2Bucket, HddThroughputBucket, InstanceEbsBucket
from hypothesis import given, settings
from hypothesis import strategies as st

INSTANCES = ["m5.large", "m5.2xlarge", "m5.4xlarge", "m6i.4xlarge", "r5b.xlarge", "i3.large", "m7g.large"]


@st.composite
def buckets(draw: st.DrawFn) -> CreditBucket:
    kind = draw(st.sampled_from(["gp2", "st1", "sc1", "instance-io", "instance-byte"]))
    if kind == "gp2":
        return Gp2Bucket.for_size(draw(st.integers(min_value=1, max_value=16384)))
    if kind in ("st1", "sc1"):
        return HddThroughputBucket.for_volume(kind, draw(st.integers(min_value=125, max_value=16384)))
    inst = instance_limits(draw(st.sampled_from(INSTANCES)))
    return (
        InstanceEbsBucket.for_iops(inst) if kind == "instance-io" else InstanceEbsBucket.for_throughput(inst)
    )


balances = st.floats(min_value=-1e7, max_value=2e8, allow_nan=False)
demands = st.floats(min_value=0, max_value=1e6, allow_nan=False)
dts = st.floats(min_value=0, max_value=86_400, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(bucket=buckets(), balance=balances, demand=demands, dt=dts)
def test_balance_stays_within_capacity(
    bucket: CreditBucket, balance: float, demand: float, dt: float
) -> None:
    new_balance, served = bucket.step(balance, demand, dt)
    assert 0.0 <= new_balance <= bucket.capacity
    assert 0.0 <= served <= demand + 1e-9
    assert served <= max(bucket.burst_rate, bucket.baseline_rate) + 1e-9
    # the baseline is always available
    assert served >= min(demand, bucket.baseline_rate) - 1e-6 * max(1.0, bucket.baseline_rate)


@settings(max_examples=300, deadline=None)
@given(bucket=buckets(), balance=balances, fraction=st.floats(min_value=0, max_value=1), dt=dts)
def test_demand_at_or_below_baseline_never_drains(
    bucket: CreditBucket, balance: float, fraction: float, dt: float
) -> None:
    demand = bucket.baseline_rate * fraction
    start = min(max(balance, 0.0), bucket.capacity)
    new_balance, served = bucket.step(balance, demand, dt)
    assert new_balance >= start - 1e-6
    assert served == pytest.approx(demand)
    assert bucket.seconds_to_empty(start, demand) is None


@settings(max_examples=200, deadline=None)
@given(bucket=buckets(), pct=st.floats(min_value=0, max_value=100), demand=demands, dt=dts)
def test_two_half_steps_equal_one_step(bucket: CreditBucket, pct: float, demand: float, dt: float) -> None:
    balance = bucket.credits_from_percent(pct)
    one, served_one = bucket.step(balance, demand, dt)
    mid, served_a = bucket.step(balance, demand, dt / 2)
    two, served_b = bucket.step(mid, demand, dt / 2)
    tol = 1e-6 * max(1.0, bucket.capacity)
    assert two == pytest.approx(one, abs=tol)
    if dt > 0:
        assert (served_a + served_b) / 2 == pytest.approx(served_one, rel=1e-6, abs=1e-6)


@settings(max_examples=200, deadline=None)
@given(bucket=buckets(), pct=st.floats(min_value=1, max_value=100), demand=demands)
def test_seconds_to_empty_is_when_step_empties(bucket: CreditBucket, pct: float, demand: float) -> None:
    balance = bucket.credits_from_percent(pct)
    seconds = bucket.seconds_to_empty(balance, demand)
    if seconds is None:
        assert min(demand, bucket.burst_rate) <= bucket.baseline_rate or not bucket.bursts
        return
    assert math.isfinite(seconds) and seconds >= 0
    new_balance, served = bucket.step(balance, demand, seconds)
    assert new_balance == pytest.approx(0.0, abs=1e-6 * bucket.capacity)
    assert served == pytest.approx(min(demand, bucket.burst_rate))


@settings(max_examples=200, deadline=None)
@given(
    bucket=buckets(),
    pct=st.floats(min_value=0, max_value=99),
    fraction=st.floats(min_value=0, max_value=0.99),
)
def test_refill_seconds_is_when_step_fills(bucket: CreditBucket, pct: float, fraction: float) -> None:
    balance = bucket.credits_from_percent(pct)
    demand = bucket.baseline_rate * fraction
    seconds = bucket.refill_seconds(balance, demand)
    if not bucket.bursts:
        assert seconds is None
        return
    assert seconds is not None
    new_balance, _ = bucket.step(balance, demand, seconds)
    assert new_balance == pytest.approx(bucket.capacity, rel=1e-9)


@pytest.mark.parametrize("volume_type", ["st1", "sc1", "gp2"])
def test_an_empty_bucket_serves_its_baseline_even_over_a_subnormal_step(volume_type: str) -> None:
    # Hypothesis found it: (target x t + baseline x (dt - t)) / dt underflowed to 0 or 7 for dt = 5e-324
    from headroom.domain.catalog import volume_limits
    from headroom.domain.physics.burst import volume_bucket

    bucket = volume_bucket(volume_limits(volume_type, 500.0))
    assert bucket is not None
    balance, served = bucket.step(0.0, bucket.burst_rate * 10, 5e-324)
    assert balance == 0.0 and served == pytest.approx(bucket.baseline_rate)
