"""Growth forecasts (pure): project a series (IOPS, MiB/s, used bytes) forward and say when it hits a ceiling.

    forecast_growth(values, *, step_seconds, start, horizon_days, ceiling=None, seed=0, ...) -> GrowthForecast

`values` are samples every `step_seconds` (<= 3,600) from `start` (NaN for a gap). Time is a parameter: the
forecast starts at the hour after the last sample. The advisor calls it per node and volume on counted IOPS,
MiB/s and used bytes, with the ceiling from the catalog (`headroom.domain.catalog.volume_limits`).

Growth (`growth=`):
- "multiplicative" (default): fit on log(values): compound growth and a seasonal swing that scales with the
  load, as the simulator models workload growth ((1 + g)^(t / 168 h), headroom.domain.snapshot.simulate) and as
  block-cache misses grow faster than the load once the working set outgrows memory. With a linear truth it
  errs early (a warning a little soon), with a compound truth the additive fit errs late. Falls back to
  additive for a series with a value <= 0.
- "additive": fit on the values: a straight-line trend.

Method, by how much history there is (after an hourly resample and a cap of `MAX_HISTORY_HOURS`):
- >= 2 weekly cycles (336 h): Holt-Winters (statsmodels `ExponentialSmoothing`), additive trend, weekly
  season (168 h, which also carries the daily shape; on the log scale the season is additive, on the raw
  scale multiplicative when positive). "ets-weekly".
- >= 3 daily cycles (72 h): the same with a daily season (24 h). "ets-daily".
  A season is only fitted when its strength (FPP3 §4.3, `seasonal_strength`) is >= 0.3; otherwise, e.g. for
  used bytes, Holt's linear trend alone. "holt".
  The trend is not smoothed (β = 0): the level and the season adapt, the slope is one drift for the whole
  history. Each growth mode assumes a straight line on its scale (log or raw), and the question is the growth
  over weeks. Left free, the optimiser of one-step-ahead errors picks β ≈ 1 on a smooth real series (hourly
  electricity demand, bench/README.md "Real world": β 0.89-1.0 in all ten 21-day fits) and extrapolates the
  last hours' momentum: hundreds of %/week either way, a 7-day MAPE of 80-280 %; with β = 0, 8-12 %. The
  cost: the additive mode no longer bends towards a compound truth (bench/README.md: stored bytes 2-13 days
  late instead of 1-7); the multiplicative default fits one exactly.
  Estimation: least squares of the one-step errors over α, γ and the initial states, as statsmodels'
  `initialization_method="estimated"`. With an additive season (always on the log scale) and β = 0 the errors
  are affine in the initial states, so for each α, γ those are solved exactly and only α, γ are searched
  (`_estimate_additive`), and the model is run forward in closed form (`_simulate_additive`): ~0.05 s a weekly
  fit instead of ~1 s, the same criterion at an SSE as low or lower, the same forecast and paths as statsmodels'
  model given those states (tests; docs/projections.md, "Cost"). A multiplicative season (the additive mode on
  positive values) is not linear in its states and keeps statsmodels' search and simulation.
- Otherwise: a robust line, Theil-Sen (`scipy.stats.theilslopes`) on the hourly values after removing the
  hour-of-day profile when there are two daily cycles; band from the slope's 90 % confidence interval
  (widened by sqrt((1 + ρ) / (1 − ρ)) for the residuals' lag-1 autocorrelation ρ) pivoted at the centre of
  the data, plus the residual quantiles. "theil-sen".
  The profile is the median, per hour of day, of the values minus a slope taken only from pairs of hours a
  whole number of days apart (the Seasonal Kendall slope, Hirsch, Slack & Smith 1982), which no daily cycle
  can bias. Read off a plain Theil-Sen line instead, the cycle's bias on that line leaked into the profile
  and back into the final slope (2 days of a 10 %/week series read as ~29 %/week): the main reason the band
  covered only 31-58 % of the simulator's held-out demand hours; now 51-85 % (bench/README.md). Still short
  of 90 %: two days cannot show a weekly pattern, weather or a change of pace between days. A first look.

The band (default 90 %) comes from simulating the fitted ETS model forward with bootstrapped residuals
(statsmodels' `simulate(..., random_errors="bootstrap")`, or the same draw summed in closed form), each path
also given its own trend offset drawn from N(0, se), se from the Theil-Sen confidence interval of the daily
means: with an unsmoothed trend the model's own paths carry noise but not the uncertainty of the slope, which
is what dominates "days until the ceiling".
Seeded: the same input and seed give the same answer. For the Theil-Sen fallback the band is analytic. The
point forecast is clamped into the band. Backtests on the simulator and on two real series (hourly
electricity demand, Mauna Loa CO2), with their limits (a weekly pattern needs two weeks; two days of history
give wide errors and a band that is too narrow): bench/README.md.

Days until the ceiling: the first forecast hour whose value reaches `ceiling` on the point path; the interval
is the 5th/95th percentile of the first-passage time over the simulated paths (Theil-Sen: the first passage of
the upper / lower band edge). None means "not within the horizon". If the last day of history already reached
the ceiling, days = 0. The value compared is the hourly aggregate (`aggregate`, mean by default): a ceiling
reached by the hourly mean means sustained throttling at the daily peak, not a one-minute spike.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from functools import cache
from datetime import datetime, timedelta
from statistics import NormalDist
from typing import Literal

import numpy as np
from headroom.domain.units import format_quantity
from numpy.typing import ArrayLike, NDArray
from threadpoolctl import ThreadpoolController

# SciPy's optimiser, filters and statistics and statsmodels are imported where a forecast is fitted, not here: they
# take about 1.2 s of CPU to import, and every process that loads the advisor (the API, each Celery worker, every
# `headroom` command, `headroom patch` and `headroom --help` included) loaded them whether it forecast or not
# (bench/ci_time.md, "Seventh pass").

Array = NDArray[np.float64]
Aggregate = Literal["mean", "max", "last"]
Method = Literal["ets-weekly", "ets-daily", "holt", "theil-sen", "constant"]
Growth = Literal["additive", "multiplicative"]

HOUR = 3600.0
DAY_HOURS = 24
WEEK_HOURS = 168
WEEKLY_MIN_HOURS = 2 * WEEK_HOURS  # two weekly cycles before fitting a weekly season
DAILY_MIN_HOURS = 3 * DAY_HOURS  # three daily cycles before fitting a daily season
MIN_HOURS = 6  # below this there is nothing to fit a line to
MAX_HISTORY_HOURS = 8 * WEEK_HOURS  # cap the fit at 8 weeks: fast, and old behaviour matters less
SIMULATIONS = 200
MAX_HORIZON_DAYS = 365.0
# Below this seasonal strength (Hyndman & Athanasopoulos, FPP3 §4.3: F_S = max(0, 1 − Var(R) / Var(S + R))) the
# series is fitted without a season; 0.3 is our threshold: a 5 % hourly noise on a ±30 % diurnal cycle gives
# ~0.99, a smooth growing series ~0.
SEASONAL_MIN_STRENGTH = 0.3


@dataclass(frozen=True)
class GrowthForecast:
    """A projected series with its band, and when it reaches a ceiling.

    `timestamps`/`point`/`low`/`high` are the forecast path (hourly, from the hour after the history), to
    chart as a line with a shaded band. Days are from the end of the history; None = not within the horizon.
    """

    method: Method
    start: datetime  # first forecast hour
    timestamps: tuple[datetime, ...]
    point: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    interval: float  # e.g. 0.9 for a 5-95 % band
    level_now: float  # the last hourly value of the history (the smoothed level for ETS)
    slope_per_day: float  # trend at the end of the history, units per day
    growth_percent_per_week: float | None  # compound weekly rate (multiplicative) or slope × 7 d / level, %
    ceiling: float | None
    days_until_ceiling: float | None
    days_until_ceiling_low: float | None  # earliest
    days_until_ceiling_high: float | None  # latest (None: not within the horizon)
    hits_at: datetime | None
    history_hours: int
    notes: tuple[str, ...] = ()


def hourly(values: ArrayLike, step_seconds: float, aggregate: Aggregate = "mean") -> Array:
    """Resample samples at `step_seconds` (<= 1 h) to hourly aggregates, interpolating empty hours."""
    v = np.asarray(values, dtype=np.float64)
    if step_seconds <= 0 or step_seconds > HOUR:
        raise ValueError("step_seconds must be in (0, 3600]")
    per_hour = int(round(HOUR / step_seconds))
    if per_hour <= 0 or abs(per_hour * step_seconds - HOUR) > 1e-6:
        raise ValueError("step_seconds must divide an hour")
    n_hours = len(v) // per_hour
    if n_hours == 0:
        return np.zeros(0)
    blocks = v[: n_hours * per_hour].reshape(n_hours, per_hour)
    if per_hour == 1:  # already hourly (the daily projections): every aggregate of one value is that value
        out = np.where(np.isfinite(blocks[:, 0]), blocks[:, 0], np.nan)
    else:
        out = np.full(n_hours, np.nan)
        for i, row in enumerate(blocks):
            finite = row[np.isfinite(row)]
            if len(finite) == 0:
                continue
            if aggregate == "mean":
                out[i] = float(np.mean(finite))
            elif aggregate == "max":
                out[i] = float(np.max(finite))
            else:
                out[i] = float(finite[-1])
    ok = np.isfinite(out)
    if ok.sum() == 0:
        return np.zeros(0)
    if not ok.all():
        idx = np.arange(n_hours)
        out = np.interp(idx, idx[ok], out[ok])
    return out


def _first_passage_hours(path: Array, ceiling: float) -> float | None:
    """Hours from the end of the history to the start of the first forecast hour at or above the ceiling."""
    hit = np.flatnonzero(path >= ceiling)
    return None if len(hit) == 0 else float(hit[0])


def _days(hours: float | None) -> float | None:
    return None if hours is None else hours / 24.0


def _one_step_errors(z: Array, alpha: float, gamma: float, period: int | None) -> tuple[Array, Array, Array]:
    """One-step errors of additive Holt-Winters with an unsmoothed trend, as columns of an affine map.

    Column 0 holds the errors from zero initial states, column 1 + k the change per unit of initial state k,
    the states being (level, trend, season 1 .. period − 1); season 0 is fixed at 0, which loses nothing (a
    constant moved from the season into the level fits the same). With β = 0 every state is linear in the
    errors, so the errors are affine in the initial states for fixed α, γ. Each season slot is updated once
    a cycle, so a cycle is computed at once: the level is a first-order recursion along it (`lfilter`).
    Also returns, in the same columns, the end states: the level forecast l(n−1) + b and the season by slot.
    """
    n = len(z)
    block = period or n
    k = 2 + (period - 1 if period else 0)
    trend = np.zeros(k + 1)
    trend[2] = 1.0
    level_forecast = trend.copy()  # l0 + b, the forecast of the first level
    level_forecast[1] = 1.0
    season = np.zeros((block if period else 1, k + 1))
    if period:
        season[1:, 3:] = np.eye(period - 1)
    errors = np.empty((n, k + 1))
    smooth = [1.0, -(1.0 - alpha)]
    from scipy.signal import lfilter

    for t0 in range(0, n, block):
        size = min(block, n - t0)
        target = -season[:size] if period else np.zeros((size, k + 1))  # z − season, per column
        target[:, 0] += z[t0 : t0 + size]
        # level forecast u(t+1) = (1 − α) u(t) + α (z(t) − s(t − m)) + b
        after, _ = lfilter(
            [1.0], smooth, alpha * target + trend, axis=0, zi=(1.0 - alpha) * level_forecast[None, :]
        )
        before = np.vstack([level_forecast[None, :], after[:-1]])
        e = target - before
        errors[t0 : t0 + size] = e
        if period:
            season[:size] += gamma * e
        level_forecast = after[-1]
    return errors, level_forecast, season


def _best_initial_states(errors: Array) -> tuple[float, Array]:
    """Initial states minimising the sum of squared one-step errors (linear least squares); (SSE, states)."""
    a, b = errors[:, 1:], -errors[:, 0]
    try:
        states = np.asarray(np.linalg.solve(a.T @ a, a.T @ b), dtype=np.float64)
    except np.linalg.LinAlgError:  # singular (e.g. too few cycles for the states): the minimum-norm solution
        states = np.asarray(np.linalg.lstsq(a, b, rcond=None)[0], dtype=np.float64)
    residual = errors[:, 0] + a @ states
    return float(residual @ residual), states


@cache
def _blas() -> ThreadpoolController:
    """The process's BLAS thread pools (looked up once)."""
    return ThreadpoolController()


@dataclass(frozen=True)
class _AdditiveFit:
    alpha: float
    gamma: float
    initial: Array  # (level, trend, season 0 .. period − 1) at the start of the history
    residuals: Array  # one-step errors over the history
    level: float  # after the last observation
    trend: float  # per step
    season_next: Array | None  # the season for the next `period` steps, in order


def _estimate_additive(z: Array, period: int | None) -> _AdditiveFit:
    """Least-squares α, γ and initial states of additive Holt-Winters with β = 0, and the fit's end states.

    The same criterion as statsmodels' `ExponentialSmoothing(..., initialization_method="estimated")` (the sum
    of squared one-step errors, α in [0, 1], γ in [0, 1 − α]), which searched α, γ and all 2 + period initial
    states at once with numerical gradients: 170 dimensions for a weekly season, ~1 s a fit. Here the states
    are solved exactly for each α, γ, and only those two are searched (docs/projections.md, "Cost").
    """
    scale = max(float(np.var(z)) * len(z), 1e-300)  # SSE relative to the data's, so tolerances are scale-free

    def sse(p: Array) -> float:
        alpha, share = float(p[0]), float(p[1])
        return _best_initial_states(_one_step_errors(z, alpha, share * (1.0 - alpha), period)[0])[0] / scale

    grid = [np.array([a, g]) for a in (0.1, 0.5, 0.9) for g in ((0.0, 0.5) if period else (0.0,))]
    bounds = [(0.0, 1.0), (0.0, 1.0) if period else (0.0, 0.0)]
    # One BLAS thread: a 170 × 170 solve gains nothing from two, and on a busy machine waiting for the second
    # thread made each solve ~40 times slower (bench/README.md, "Projections' cost").
    from scipy.optimize import minimize

    with _blas().limit(limits=1, user_api="blas"):
        best = minimize(sse, min(grid, key=sse), method="L-BFGS-B", bounds=bounds).x
        alpha, gamma = float(best[0]), float(best[1]) * (1.0 - float(best[0]))
        errors, level_forecast, season = _one_step_errors(z, alpha, gamma, period)
        _, states = _best_initial_states(errors)
    weights = np.concatenate([[1.0], states])  # the affine columns evaluated at the fitted initial states
    trend = float(states[1])
    season_next = None if period is None else season[(len(z) + np.arange(period)) % period] @ weights
    initial = states[:2] if period is None else np.concatenate([states[:2], [0.0], states[2:]])
    return _AdditiveFit(
        alpha, gamma, initial, errors @ weights, float(level_forecast @ weights) - trend, trend, season_next
    )


def _simulate_additive(
    level: float, trend: float, season_end: Array | None, alpha: float, gamma: float, errors: Array
) -> Array:
    """Paths (horizon × n) of additive Holt-Winters with β = 0 driven by `errors` (horizon × n) from the end state.

    The recursion y(t) = l(t−1) + b + s(t−m) + e(t), l(t) = l(t−1) + b + α e(t), s(t) = s(t−m) + γ e(t) summed
    in closed form: the level adds b and α × the running sum of the errors, each season slot γ × the sum of
    the errors that fell in it before. What statsmodels' `simulate` computes step by step.
    """
    horizon, paths = errors.shape
    steps = np.arange(horizon, dtype=np.float64)[:, None]
    before = np.vstack([np.zeros((1, paths)), np.cumsum(errors, axis=0)[:-1]])
    out = level + (steps + 1.0) * trend + alpha * before + errors
    if season_end is not None:
        period = len(season_end)
        cycles = -(-horizon // period)
        padded = np.zeros((cycles * period, paths))
        padded[:horizon] = errors
        by_cycle = padded.reshape(cycles, period, paths)
        earlier = np.cumsum(by_cycle, axis=0) - by_cycle  # the slot's errors in earlier cycles
        out += (season_end[:, None] + gamma * earlier).reshape(cycles * period, paths)[:horizon]
    return out


def _fit_ets(
    y: Array, period: int | None, seed: int, horizon: int, *, additive_season: bool
) -> tuple[Array, Array, float, float]:
    """Fit Holt-Winters (Holt without a period); return (point, paths (horizon × n), level, trend per hour)."""
    seasonal: Literal["mul", "add"] | None = None
    if period is not None:
        seasonal = "add" if additive_season or float(np.min(y)) <= 0 else "mul"
    if seasonal != "mul":
        fitted = _estimate_additive(y, period)
        # the point path is the model run without errors; the paths add bootstrapped one-step errors, drawn as
        # statsmodels' `simulate(..., random_errors="bootstrap")` draws them
        no_errors = np.zeros((horizon, 1))
        point = _simulate_additive(fitted.level, fitted.trend, fitted.season_next, 0.0, 0.0, no_errors)[:, 0]
        draws = np.random.default_rng(seed).choice(
            fitted.residuals, size=(horizon, SIMULATIONS), replace=True
        )
        sims = _simulate_additive(
            fitted.level, fitted.trend, fitted.season_next, fitted.alpha, fitted.gamma, draws
        )
        return point, sims, fitted.level, fitted.trend
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence chatter from the optimiser; the fit is still used
        # a multiplicative season is not linear in its states: statsmodels' own search
        from statsmodels.tsa.holtwinters import ExponentialSmoothing

        model = ExponentialSmoothing(
            y, trend="add", seasonal=seasonal, seasonal_periods=period, initialization_method="estimated"
        )
        fit = model.fit(smoothing_trend=0.0)  # one drift, not the last hours' momentum (module docstring)
        point = np.asarray(fit.forecast(horizon), dtype=np.float64)
        sims = np.asarray(
            fit.simulate(
                horizon,
                repetitions=SIMULATIONS,
                error="add",
                random_errors="bootstrap",
                rng=np.random.default_rng(seed),
            ),
            dtype=np.float64,
        ).reshape(horizon, SIMULATIONS)
    level = float(np.asarray(fit.level)[-1])
    trend = float(np.asarray(fit.trend)[-1])
    return point, sims, level, trend


def seasonal_strength(y: Array, period: int) -> float:
    """Return 1 − Var(remainder) / Var(detrended) over whole cycles (0: no season, 1: all season)."""
    cycles = len(y) // period
    if cycles < 2:
        return 0.0
    w = y[len(y) - cycles * period :]
    t = np.arange(len(w), dtype=np.float64)
    slope, intercept = np.polyfit(t, w, 1)
    d = w - (intercept + slope * t)
    var_d = float(np.var(d))
    if var_d <= (1e-6 * max(abs(float(np.mean(w))), 1e-12)) ** 2:
        return 0.0  # a straight line
    by_phase = d.reshape(cycles, period)
    remainder = by_phase - by_phase.mean(axis=0)
    return max(0.0, 1.0 - float(np.var(remainder)) / var_d)


def _daily_slope_se(y: Array, interval: float) -> float:
    """Standard error of the trend per hour from a Theil-Sen fit of the daily means (normal approximation)."""
    days = len(y) // DAY_HOURS
    means = y[len(y) - days * DAY_HOURS :].reshape(days, DAY_HOURS).mean(axis=1)
    from scipy.stats import theilslopes

    res = theilslopes(means, np.arange(days, dtype=np.float64), alpha=interval)
    z = float(NormalDist().inv_cdf(0.5 + interval / 2))
    return float(res.high_slope - res.low_slope) / 2.0 / z / DAY_HOURS


def _seasonal_sen_slope(y: Array, period: int) -> float:
    """Median slope over all pairs of points a whole number of periods apart (a periodic profile cancels).

    The Seasonal Kendall slope estimator (Hirsch, Slack & Smith, "Techniques of trend analysis for monthly
    water quality data", Water Resources Research 18(1), 1982): Theil-Sen restricted to pairs in the same
    season, so a daily cycle adds nothing to any pair's slope.
    """
    n = len(y)
    slopes = [(y[lag:] - y[:-lag]) / lag for lag in range(period, n, period)]
    return float(np.median(np.concatenate(slopes)))


def forecast_growth(
    values: ArrayLike,
    *,
    step_seconds: float,
    start: datetime,
    horizon_days: float = 30.0,
    ceiling: float | None = None,
    seed: int = 0,
    interval: float = 0.9,
    aggregate: Aggregate = "mean",
    growth: Growth = "multiplicative",
) -> GrowthForecast:
    """Project `values` (every `step_seconds` from `start`) `horizon_days` ahead and find the ceiling."""
    if start.tzinfo is None:
        raise ValueError("start must carry a time zone")
    if not 0 < horizon_days <= MAX_HORIZON_DAYS:
        raise ValueError(f"horizon_days must be in (0, {format_quantity(MAX_HORIZON_DAYS, '')}]")
    if not 0 < interval < 1:
        raise ValueError("interval must be in (0, 1)")
    y_all = hourly(values, step_seconds, aggregate)
    if len(y_all) < MIN_HOURS:
        raise ValueError(f"need at least {MIN_HOURS} hours of data, got {len(y_all)}")
    y = y_all[-MAX_HISTORY_HOURS:]
    n = len(y)
    history_end = start + timedelta(seconds=len(y_all) * HOUR)
    horizon = int(math.ceil(horizon_days * DAY_HOURS))
    q = (100.0 * (1 - interval) / 2, 100.0 * (1 + interval) / 2)
    notes: list[str] = []
    sims: Array | None = None

    use_log = growth == "multiplicative" and float(np.ptp(y)) > 0.0
    if use_log and float(np.min(y)) <= 0:
        use_log = False
        notes.append("multiplicative growth needs positive values: fitted additive")
    z = np.log(y) if use_log else y

    if float(np.ptp(y)) == 0.0:
        method: Method = "constant"
        point = np.full(horizon, z[-1])
        low, high = point.copy(), point.copy()
        level, trend = float(z[-1]), 0.0
    elif n >= DAILY_MIN_HOURS:
        period: int | None = WEEK_HOURS if n >= WEEKLY_MIN_HOURS else DAY_HOURS
        if period == WEEK_HOURS and seasonal_strength(z, WEEK_HOURS) < SEASONAL_MIN_STRENGTH:
            period = DAY_HOURS
        if period is not None and seasonal_strength(z, period) < SEASONAL_MIN_STRENGTH:
            period = None  # a smooth series (e.g. used bytes): a season would only fit noise
        method = {WEEK_HOURS: "ets-weekly", DAY_HOURS: "ets-daily", None: "holt"}[period]  # type: ignore[assignment]
        point, sims, level, trend = _fit_ets(z, period, seed, horizon, additive_season=use_log)
        # Holt-Winters' simulated paths carry the noise but no trend uncertainty (the trend is not smoothed),
        # so a 10 % slope error would sit outside the band. Add it: each
        # path gets its own slope offset ~ N(0, se), se from the Theil-Sen confidence interval of the daily
        # means (which average the diurnal cycle out).
        se = _daily_slope_se(z, interval)
        offsets = np.random.default_rng([seed, 1]).normal(0.0, se, sims.shape[1])
        sims = sims + np.outer(np.arange(1, horizon + 1, dtype=np.float64), offsets)
        low, high = np.percentile(sims, q, axis=1)  # one pass for both
    else:
        method = "theil-sen"
        t = np.arange(n, dtype=np.float64)
        profile = np.zeros(n)
        cycle = np.zeros(DAY_HOURS)
        if n >= 2 * DAY_HOURS:
            # two daily cycles: remove the hour-of-day profile before the line (or the cycle biases the slope).
            # The profile is read off z minus a slope from pairs of hours whole days apart, which no daily
            # cycle can bias; a plain Theil-Sen slope here leaks its bias into the profile and from there into
            # the line (a 2-day history read 31 %/week growth as 62 %).
            d = z - _seasonal_sen_slope(z, DAY_HOURS) * t
            k = (n // DAY_HOURS) * DAY_HOURS
            cycle = np.median(d[n - k :].reshape(-1, DAY_HOURS), axis=0)
            cycle = cycle - cycle.mean()
            phase = (np.arange(n) - (n - k)) % DAY_HOURS
            profile = cycle[phase]
            notes.append(
                f"{n} h of history (< {DAILY_MIN_HOURS} h): robust line plus the hour-of-day profile"
            )
        else:
            notes.append(f"{n} h of history (< {2 * DAY_HOURS} h): robust straight line, no seasonality")
        from scipy.stats import theilslopes

        res = theilslopes(z - profile, t, alpha=interval)
        slope, intercept = float(res.slope), float(res.intercept)
        resid = z - profile - (intercept + slope * t)
        # Theil-Sen's interval assumes independent points; hourly residuals are not (load drifts for hours),
        # so widen it by the effective-sample-size factor sqrt((1 + ρ) / (1 − ρ)), ρ = lag-1 autocorrelation.
        rho = 0.0
        if n > 3 and float(np.std(resid)) > 0:
            rho = float(np.clip(np.corrcoef(resid[:-1], resid[1:])[0, 1], 0.0, 0.95))
        widen = math.sqrt((1 + rho) / (1 - rho))
        lo_slope = slope - (slope - float(res.low_slope)) * widen
        hi_slope = slope + (float(res.high_slope) - slope) * widen
        r_lo, r_hi = np.percentile(resid, q)
        tf = np.arange(n, n + horizon, dtype=np.float64)
        k = (n // DAY_HOURS) * DAY_HOURS
        future_profile = cycle[(np.arange(n, n + horizon) - (n - k)) % DAY_HOURS]
        centre_t = (n - 1) / 2.0
        centre_y = intercept + slope * centre_t
        point = intercept + slope * tf + future_profile
        low = centre_y + lo_slope * (tf - centre_t) + r_lo + future_profile
        high = centre_y + hi_slope * (tf - centre_t) + r_hi + future_profile
        level, trend = float(intercept + slope * (n - 1)), slope

    weekly_pct: float | None = None
    if use_log:
        point, low, high = np.exp(point), np.exp(low), np.exp(high)
        if sims is not None:
            sims = np.exp(sims)
        weekly_pct = 100.0 * math.expm1(trend * WEEK_HOURS)  # compound rate
        trend = math.exp(level) * math.expm1(trend)  # units per hour at the current level
        level = math.exp(level)
    elif level > 0:
        weekly_pct = 100.0 * trend * WEEK_HOURS / level

    low = np.minimum(low, point)
    high = np.maximum(high, point)

    days = days_low = days_high = None
    if ceiling is not None:
        last_day = y_all[-DAY_HOURS:]
        if float(np.max(last_day)) >= ceiling:
            days = days_low = days_high = 0.0
            notes.append("the ceiling was already reached in the last day of history")
        else:
            days = _days(_first_passage_hours(point, ceiling))
            if sims is not None:
                reached = sims >= ceiling
                passages = np.where(reached.any(axis=0), np.argmax(reached, axis=0), math.inf)
                # no interpolation: paths that never cross are +inf, and inf - inf is NaN
                lo_h = float(np.percentile(passages, q[0], method="lower"))
                hi_h = float(np.percentile(passages, q[1], method="higher"))
                days_low = _days(None if math.isinf(lo_h) else lo_h)
                days_high = _days(None if math.isinf(hi_h) else hi_h)
            else:
                days_low = _days(_first_passage_hours(high, ceiling))
                days_high = _days(_first_passage_hours(low, ceiling))
            # keep low <= point <= high (None = beyond the horizon)
            if days is not None:
                days_low = days if days_low is None else min(days_low, days)
                days_high = None if days_high is None else max(days_high, days)
            elif days_low is not None and days_high is not None:
                days_high = None

    timestamps = tuple(history_end + timedelta(hours=i) for i in range(horizon))
    slope_per_day = trend * DAY_HOURS
    return GrowthForecast(
        method=method,
        start=history_end,
        timestamps=timestamps,
        point=tuple(point.tolist()),
        low=tuple(low.tolist()),
        high=tuple(high.tolist()),
        interval=interval,
        level_now=level,
        slope_per_day=slope_per_day,
        growth_percent_per_week=weekly_pct,
        ceiling=ceiling,
        days_until_ceiling=days,
        days_until_ceiling_low=days_low,
        days_until_ceiling_high=days_high,
        hits_at=None if days is None else history_end + timedelta(days=days),
        history_hours=n,
        notes=tuple(notes),
    )
