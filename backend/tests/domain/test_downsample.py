"""M4 downsampling for charts: the budget is never exceeded and extremes survive (a single ceiling hit among
10,000 points above all), the kept points are real samples, gaps (NaN) are never picked as extremes."""

from __future__ import annotations

import numpy as np
import pytest
from headroom.domain.downsample import m4_indices, span_seconds, spans_for
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

T0 = 1_795_000_000  # any epoch second; a multiple of 60


def minutes(n: int) -> np.ndarray:
    return T0 + 60 * np.arange(n, dtype=np.int64)


@pytest.mark.parametrize("position", [0, 1, 4_999, 7_777, 9_998, 9_999])
@pytest.mark.parametrize("budget", [4, 100, 300, 2_000])
def test_one_sample_at_the_ceiling_among_10000_survives(position: int, budget: int) -> None:
    # 10,000 one-minute points of a volume at ~1,500 IOPS with noise below 3,000; one minute at gp3's default
    # 3,000 IOPS (AWS EBS volume types, gp3 baseline): the minute the advisor would flag.
    rng = np.random.default_rng(7)
    t = minutes(10_000)
    v = 1_500 + rng.uniform(-400, 400, t.size)
    v[position] = 3_000.0
    keep = m4_indices(t, v, budget, start=int(t[0]), end=int(t[-1]) + 60)
    assert position in keep
    assert v[keep].max() == 3_000.0
    assert keep.size <= budget


def test_a_single_dip_survives_too() -> None:
    # A burst balance at 100 % that touches 0 % for one minute: the minimum is kept like the maximum.
    t = minutes(10_000)
    v = np.full(t.size, 100.0)
    v[4_321] = 0.0
    keep = m4_indices(t, v, 200, start=int(t[0]), end=int(t[-1]) + 60)
    assert 4_321 in keep and v[keep].min() == 0.0


def test_a_short_series_comes_back_whole() -> None:
    t = minutes(360)
    keep = m4_indices(t, np.arange(360.0), 360, start=int(t[0]), end=int(t[-1]) + 60)
    assert keep.tolist() == list(range(360))


def test_each_span_keeps_first_lowest_highest_last() -> None:
    # 8 points, budget 4: one span; first (idx 0), lowest (idx 5), highest (idx 2), last (idx 7).
    t = minutes(8)
    v = np.array([5.0, 6.0, 9.0, 4.0, 7.0, 1.0, 8.0, 3.0])
    assert m4_indices(t, v, 4, start=int(t[0]), end=int(t[-1]) + 60).tolist() == [0, 2, 5, 7]
    # budget 8 covers the 8 points: all of them; budget 4 twice over 16 points: two spans of 8.
    t16 = minutes(16)
    v16 = np.r_[v, v]
    assert m4_indices(t16, v16, 4 * 2, start=int(t16[0]), end=int(t16[-1]) + 60).tolist() == \
        [0, 2, 5, 7, 8, 10, 13, 15]


def test_gaps_are_never_extremes_and_an_all_gap_series_is_empty() -> None:
    t = minutes(1_000)
    v = np.full(t.size, np.nan)
    assert m4_indices(t, v, 40, start=int(t[0]), end=int(t[-1]) + 60).size == 0
    v[::3] = 1.0
    v[500] = 9.0
    keep = m4_indices(t, v, 40, start=int(t[0]), end=int(t[-1]) + 60)
    assert np.isfinite(v[keep]).all() and 500 in keep


def test_spans_follow_the_window_not_the_series() -> None:
    # Two series of one chart share span edges: 6 hours at a budget of 120 points is 30 spans of 12 minutes.
    assert spans_for(120) == 30 and span_seconds(0, 6 * 3600, 120) == 720
    # A series that starts late (an EC2 series, 5-minute points) is cut on the same edges.
    t = T0 + 3600 + 300 * np.arange(200, dtype=np.int64)
    keep = m4_indices(t, np.sin(np.arange(200.0)), 120, start=T0, end=T0 + 20 * 3600)
    assert keep.size <= 120


def test_bad_budgets_and_windows_are_refused() -> None:
    t = minutes(10)
    with pytest.raises(ValueError, match="budget"):
        m4_indices(t, np.zeros(10), 3, start=int(t[0]), end=int(t[-1]))
    with pytest.raises(ValueError, match="start"):
        m4_indices(t, np.zeros(10), 4, start=int(t[-1]), end=int(t[0]))


@settings(max_examples=200, deadline=None)
@given(
    values=hnp.arrays(np.float64, st.integers(1, 3_000),
                      elements=st.one_of(st.floats(-1e9, 1e9), st.just(np.nan))),
    budget=st.integers(4, 2_500),
    step=st.sampled_from([60, 300, 3600]),
)
def test_never_over_budget_and_every_extreme_kept(values: np.ndarray, budget: int, step: int) -> None:
    t = T0 + step * np.arange(values.size, dtype=np.int64)
    keep = m4_indices(t, values, budget, start=int(t[0]), end=int(t[-1]) + step)
    assert keep.size <= max(budget, 0)
    assert (np.diff(keep) > 0).all()  # ascending, no repeats: a drawable line
    finite = values[np.isfinite(values)]
    if values.size <= budget:
        assert keep.size == values.size
    elif finite.size:
        assert values[keep].max() == finite.max() and values[keep].min() == finite.min()
        assert np.isfinite(values[keep]).all()
