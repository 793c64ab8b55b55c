"""Growth forecasts on synthetic series whose truth we know: a linear trend (10 % of the starting level per
week), a daily cosine like the simulator's (headroom.domain.snapshot.simulate: 1 + amplitude × cos(2π (hour − peak) /
24)), an optional weekend factor, multiplicative log-normal noise. The expected days-until-ceiling come from the
noiseless series itself, so each case states its own truth.

Tolerance on days until ceiling (21-day lead): ±2 days. The crossing time is ceiling-gap / slope, so a relative
slope error e moves it by about e × lead; 5 % noise per 5-minute sample averages to ~1.5 % per hour, and a trend
fitted from 1-3 weeks of such hours is good to ~5-10 % (Holt-Winters on this data lands at 0-7 %), i.e. 1-2
days at 21 days. The interval must contain the truth.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from headroom.domain.forecast.growth import GrowthForecast, forecast_growth, hourly, seasonal_strength
from hypothesis import given, settings
from hypothesis import strategies as st

START = datetime(2026, 1, 5, tzinfo=UTC)  # a Monday, 00:00 UTC
STEP = 300


def synthetic(
    hours: float,
    *,
    base: float = 1000.0,
    growth_per_week: float = 0.10,
    amplitude: float = 0.3,
    peak_hour: float = 14.0,
    weekend: float = 1.0,
    noise: float = 0.05,
    seed: int = 1,
) -> np.ndarray:
    """Samples every STEP seconds from START: linear trend × diurnal × weekend × noise."""
    n = int(round(hours * 3600 / STEP))
    th = np.arange(n) * STEP / 3600.0
    day = (th // 24) % 7  # 0 = Monday
    shape = 1 + amplitude * np.cos(2 * np.pi * (th % 24 - peak_hour) / 24)
    weekly = np.where(day >= 5, weekend, 1.0)
    rng = np.random.default_rng(seed)
    return base * (1 + growth_per_week * th / 168) * shape * weekly * np.exp(rng.normal(0, noise, n))


def true_days(hours_history: float, ceiling: float, **kw: float) -> float:
    """Days from the end of the history to the first hour whose noiseless hourly mean reaches the ceiling."""
    clean = hourly(synthetic(hours_history + 24 * 120, noise=0.0, **kw), STEP)
    h = int(hours_history)
    hit = np.flatnonzero(clean[h:] >= ceiling)
    return float(hit[0]) / 24.0


@pytest.fixture(scope="module")
def three_weeks() -> tuple[GrowthForecast, float]:
    hours = 3 * 168
    # ceiling at the noiseless peak three weeks after the history ends: 1000 × (1 + 0.1 × 6) × 1.3 = 2,080
    ceiling = 1000 * (1 + 0.1 * 6) * 1.3
    f = forecast_growth(
        synthetic(hours), step_seconds=STEP, start=START, horizon_days=60, ceiling=ceiling, growth="additive"
    )
    return f, true_days(hours, ceiling)


@pytest.fixture(scope="module")
def one_week() -> tuple[GrowthForecast, float]:
    hours = 168
    ceiling = 1000 * (1 + 0.1 * 4) * 1.3  # peak 3 weeks after the history ends
    f = forecast_growth(
        synthetic(hours), step_seconds=STEP, start=START, horizon_days=60, ceiling=ceiling, growth="additive"
    )
    return f, true_days(hours, ceiling)


@pytest.mark.parametrize("case", ["three_weeks", "one_week"])
def test_linear_growth_days_until_ceiling(case: str, request: pytest.FixtureRequest) -> None:
    f, truth = request.getfixturevalue(case)
    assert (
        20.5 <= truth <= 22.0
    )  # the construction: three weeks on (the hourly mean sits just under the peak)
    assert f.days_until_ceiling is not None
    assert abs(f.days_until_ceiling - truth) <= 2.0
    assert f.days_until_ceiling_low is not None and f.days_until_ceiling_high is not None
    assert f.days_until_ceiling_low <= truth <= f.days_until_ceiling_high
    assert f.hits_at == f.start + timedelta(days=f.days_until_ceiling)
    # growth: 100 units/week on a de-seasonalised level of ~1,000 × (1 + 0.1 × weeks)
    assert f.slope_per_day * 7 == pytest.approx(100.0, rel=0.10)


def test_method_by_history_length(
    three_weeks: tuple[GrowthForecast, float], one_week: tuple[GrowthForecast, float]
) -> None:
    assert three_weeks[0].method == "ets-weekly"  # >= 2 weekly cycles
    assert one_week[0].method == "ets-daily"  # >= 3 daily cycles
    short = forecast_growth(synthetic(48), step_seconds=STEP, start=START, horizon_days=30, ceiling=5000)
    assert short.method == "theil-sen"  # < 3 days: the robust line
    assert short.notes
    assert three_weeks[0].history_hours == 3 * 168
    assert three_weeks[0].start == START + timedelta(hours=3 * 168)


def test_daily_seasonality_recovered(one_week: tuple[GrowthForecast, float]) -> None:
    f, _ = one_week
    day1 = np.array(f.point[:24])
    hours_of_day = [ts.hour for ts in f.timestamps[:24]]
    assert hours_of_day[int(np.argmax(day1))] in (13, 14, 15)  # synthetic peak at 14:00 UTC
    assert hours_of_day[int(np.argmin(day1))] in (1, 2, 3)  # trough 12 h later
    # peak / trough of 1 ± 0.3: 1.3 / 0.7 = 1.86
    assert day1.max() / day1.min() == pytest.approx(1.3 / 0.7, rel=0.08)


@pytest.mark.parametrize("growth", ["multiplicative", "additive"])
def test_a_smooth_swing_is_not_extrapolated_as_growth(growth: str) -> None:
    # A week of a flat load under the daily cosine and a smooth ±15 % swing over 5 days (weather-like), 0.5 %
    # noise. The only drift in the window is the swing's average slope over 7 days of a 5-day cycle: a few
    # %/week. A trend smoothed from one-step-ahead errors (β ≈ 1) followed the swing's last hours instead:
    # -68 %/week multiplicative, negative demand additive.
    t = np.arange(7 * 24, dtype=float)
    swing = 0.15 * np.sin(2 * np.pi * t / (5 * 24))
    noise = np.random.default_rng(0).normal(0, 0.005, len(t))
    y = 1000 * (1 + 0.3 * np.cos(2 * np.pi * (t % 24 - 14) / 24)) * np.exp(swing + noise)
    f = forecast_growth(y, step_seconds=3600, start=START, horizon_days=30, growth=growth)  # type: ignore[arg-type]
    assert f.method == "ets-daily"
    assert f.growth_percent_per_week is not None and abs(f.growth_percent_per_week) < 15
    # 30 days on: the daily range 700-1,300 and a few weeks' drift
    assert min(f.point) > 500
    assert max(f.point) < 2600


def test_weekly_seasonality_recovered() -> None:
    # no trend, weekends 25 % busier: the forecast week must show it
    y = synthetic(2 * 168 + 24, growth_per_week=0.0, amplitude=0.2, weekend=1.25, noise=0.03)
    f = forecast_growth(y, step_seconds=STEP, start=START, horizon_days=7)
    assert f.method == "ets-weekly"
    point = np.array(f.point)
    weekend = np.array([ts.weekday() >= 5 for ts in f.timestamps])
    assert point[weekend].mean() / point[~weekend].mean() == pytest.approx(1.25, rel=0.04)
    assert abs(f.slope_per_day * 7) < 0.03 * 1000  # no trend to speak of


def test_theil_sen_exact_line() -> None:
    # hourly samples 100 + 2 × hour for 48 h; the line reaches 300 at hour 100 = 52 h after the history.
    y = 100.0 + 2.0 * np.arange(48)
    f = forecast_growth(y, step_seconds=3600, start=START, horizon_days=10, ceiling=300.0, growth="additive")
    assert f.method == "theil-sen"
    assert f.slope_per_day == pytest.approx(48.0)
    assert f.level_now == pytest.approx(194.0)
    assert f.growth_percent_per_week == pytest.approx(100 * 48 * 7 / 194.0)
    assert f.days_until_ceiling == pytest.approx(52 / 24)
    assert f.days_until_ceiling_low == pytest.approx(52 / 24)
    assert f.days_until_ceiling_high == pytest.approx(52 / 24)
    assert f.point[0] == pytest.approx(196.0)
    assert f.low == pytest.approx(f.point)
    assert f.high == pytest.approx(f.point)


@pytest.mark.parametrize("hours", [48, 71])
def test_theil_sen_slope_not_biased_by_the_daily_cycle(hours: int) -> None:
    # Two to three days of the noiseless synthetic series: a trend of 100 units/week (10 % of 1,000) under a
    # ±30 % daily cosine. The daily profile is read off pairs of hours whole days apart, so the cycle cannot
    # leak into the slope; the profile read off a plain Theil-Sen line's residuals gave 293 units/week at 48 h
    # and 137 at 71 h.
    f = forecast_growth(
        synthetic(hours, noise=0.0), step_seconds=STEP, start=START, horizon_days=10, growth="additive"
    )
    assert f.method == "theil-sen"
    assert f.slope_per_day * 7 == pytest.approx(100.0, rel=0.03)


def test_already_above_and_never() -> None:
    y = 100.0 + 2.0 * np.arange(48)
    above = forecast_growth(y, step_seconds=3600, start=START, horizon_days=10, ceiling=150.0)
    assert above.days_until_ceiling == 0.0
    never = forecast_growth(y, step_seconds=3600, start=START, horizon_days=1, ceiling=300.0)
    assert never.days_until_ceiling is None
    assert never.hits_at is None
    falling = forecast_growth(
        y[::-1], step_seconds=3600, start=START, horizon_days=30, ceiling=300.0, growth="additive"
    )
    assert falling.days_until_ceiling is None
    assert falling.slope_per_day == pytest.approx(-48.0)


def test_compound_growth_multiplicative() -> None:
    # Used bytes growing 10 %/week compounded, as the simulator grows stored data ((1 + g)^(t / 168 h)): from
    # 400 GiB, 800 GiB (80 % of a 1,000 GiB volume) is reached at 168 × ln 2 / ln 1.1 = 1,221.8 h, i.e.
    # 46.4 days from the start, 39.4 days after one week of history. No noise and no season: Holt, not ETS.
    hours = np.arange(168, dtype=float)
    used = 400.0 * 1.1 ** (hours / 168)
    f = forecast_growth(used, step_seconds=3600, start=START, horizon_days=60, ceiling=800.0)
    assert f.method == "holt"
    truth = (168 * math.log(2) / math.log(1.1) - 168) / 24
    assert f.days_until_ceiling == pytest.approx(truth, abs=1 / 24 + 1e-9)
    assert f.growth_percent_per_week == pytest.approx(10.0, rel=0.02)
    # the additive fit of the same series is late: a straight line from the last week's slope
    g = forecast_growth(
        used, step_seconds=3600, start=START, horizon_days=60, ceiling=800.0, growth="additive"
    )
    assert g.days_until_ceiling is None or g.days_until_ceiling > truth + 3


def test_seasonal_strength() -> None:
    t = np.arange(24 * 7, dtype=float)
    assert seasonal_strength(100 + 2 * t, 24) == 0.0  # a line
    assert seasonal_strength(400 * 1.001**t, 24) < 0.3  # smooth compound growth
    assert seasonal_strength(100 + 30 * np.cos(2 * np.pi * t / 24), 24) > 0.99


def test_constant_series() -> None:
    f = forecast_growth(np.full(500, 7.0), step_seconds=STEP, start=START, horizon_days=5, ceiling=8.0)
    assert f.method == "constant"
    assert set(f.point) == {7.0}
    assert f.days_until_ceiling is None


def test_deterministic_with_seed() -> None:
    y = synthetic(76)
    a = forecast_growth(y, step_seconds=STEP, start=START, horizon_days=20, ceiling=1800, seed=3)
    b = forecast_growth(y, step_seconds=STEP, start=START, horizon_days=20, ceiling=1800, seed=3)
    c = forecast_growth(y, step_seconds=STEP, start=START, horizon_days=20, ceiling=1800, seed=4)
    assert a == b
    assert a.point == c.point  # the fit does not depend on the seed, only the simulated band does
    assert a.low != c.low


def test_hourly_resample() -> None:
    v = np.array([1.0, 3.0, np.nan, np.nan, 10.0, 20.0], dtype=float)
    assert hourly(v, 1800).tolist() == [2.0, 2.0 + (15.0 - 2.0) / 2, 15.0]  # the empty hour interpolated
    assert hourly(v, 1800, "max").tolist()[::2] == [3.0, 20.0]
    assert hourly(v, 1800, "last").tolist()[::2] == [3.0, 20.0]
    with pytest.raises(ValueError):
        hourly(v, 7200)
    with pytest.raises(ValueError):
        hourly(v, 7)


def test_rejects_bad_inputs() -> None:
    y = synthetic(48)
    with pytest.raises(ValueError, match="time zone"):
        forecast_growth(y, step_seconds=STEP, start=datetime(2026, 1, 5), horizon_days=5)
    with pytest.raises(ValueError, match="at least"):
        forecast_growth(y[:12], step_seconds=STEP, start=START, horizon_days=5)
    with pytest.raises(ValueError, match="horizon"):
        forecast_growth(y, step_seconds=STEP, start=START, horizon_days=0)


def _inf(x: float | None) -> float:
    return math.inf if x is None else x


@settings(max_examples=30, deadline=None)
@given(
    hours=st.integers(min_value=6, max_value=71),
    slope=st.floats(min_value=-5, max_value=5),
    noise=st.floats(min_value=0, max_value=0.2),
    seed=st.integers(min_value=0, max_value=1000),
    ceiling=st.floats(min_value=50, max_value=2000),
)
def test_theil_sen_band_invariants(hours: int, slope: float, noise: float, seed: int, ceiling: float) -> None:
    rng = np.random.default_rng(seed)
    y = (200.0 + slope * np.arange(hours)) * np.exp(rng.normal(0, noise, hours))
    f = forecast_growth(np.maximum(y, 1.0), step_seconds=3600, start=START, horizon_days=30, ceiling=ceiling)
    assert all(lo <= p <= hi for lo, p, hi in zip(f.low, f.point, f.high, strict=True))
    assert _inf(f.days_until_ceiling_low) <= _inf(f.days_until_ceiling) <= _inf(f.days_until_ceiling_high)


# The Holt-Winters fit estimates α, γ and the initial states itself (docs/projections.md, "Cost"); statsmodels'
# ExponentialSmoothing is the reference: the same model, the same criterion, the same simulation.


@pytest.mark.parametrize("period", [168, 24, None])
def test_additive_fit_matches_statsmodels(period: int | None) -> None:
    """Our least-squares states, run through statsmodels' model, give our SSE, end states and forecast, and no
    worse an SSE than statsmodels' own estimated fit."""
    import warnings

    from headroom.domain.forecast import growth
    from statsmodels.tsa.holtwinters import ExponentialSmoothing

    z = np.log(hourly(synthetic(3 * 168 + 5, weekend=0.6), STEP))  # not whole cycles: the season's order matters
    fitted = growth._estimate_additive(z, period)
    seasonal = "add" if period else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        known = ExponentialSmoothing(z, trend="add", seasonal=seasonal, seasonal_periods=period,
                                     initialization_method="known", initial_level=fitted.initial[0],
                                     initial_trend=fitted.initial[1],
                                     initial_seasonal=fitted.initial[2:] if period else None).fit(
            smoothing_level=fitted.alpha, smoothing_trend=0.0,
            smoothing_seasonal=fitted.gamma if period else None, optimized=False)
        estimated = ExponentialSmoothing(z, trend="add", seasonal=seasonal, seasonal_periods=period,
                                         initialization_method="estimated").fit(smoothing_trend=0.0)
    ours = float(fitted.residuals @ fitted.residuals)
    assert known.sse == pytest.approx(ours, rel=1e-9)
    assert ours <= estimated.sse * (1 + 1e-6)
    assert 0.0 <= fitted.alpha <= 1.0 and 0.0 <= fitted.gamma <= 1.0 - fitted.alpha
    assert fitted.level == pytest.approx(float(known.level[-1]), abs=1e-9)
    assert fitted.trend == pytest.approx(float(known.trend[-1]), abs=1e-12)
    point = growth._simulate_additive(fitted.level, fitted.trend, fitted.season_next, 0.0, 0.0, np.zeros((400, 1)))
    np.testing.assert_allclose(point[:, 0], known.forecast(400), rtol=0, atol=1e-9)


@pytest.mark.parametrize(("period", "gamma"), [(168, 0.0), (168, 0.2), (24, 0.1), (None, 0.0)])
def test_simulated_paths_match_statsmodels(period: int | None, gamma: float) -> None:
    """The paths summed at once equal statsmodels' step-by-step `simulate` with the same bootstrap draw."""
    import warnings

    from headroom.domain.forecast import growth
    from statsmodels.tsa.holtwinters import ExponentialSmoothing

    z = np.log(hourly(synthetic(3 * 168), STEP))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = ExponentialSmoothing(z, trend="add", seasonal="add" if period else None, seasonal_periods=period,
                                   initialization_method="estimated").fit(
            smoothing_level=0.3, smoothing_trend=0.0, smoothing_seasonal=gamma if period else None)
    horizon, paths = 500, 50
    expected = fit.simulate(horizon, repetitions=paths, error="add", random_errors="bootstrap",
                            rng=np.random.default_rng(7))
    errors = np.random.default_rng(7).choice(np.asarray(fit.resid), size=(horizon, paths), replace=True)
    season_end = None if period is None else np.asarray(fit.season)[-period:]
    ours = growth._simulate_additive(float(fit.level[-1]), float(fit.trend[-1]), season_end, 0.3, gamma, errors)
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-9)
