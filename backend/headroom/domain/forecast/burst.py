"""Burst-bucket forecasts (pure): when a credit bucket empties at the recent demand, what remains, refill.

Inputs are the CloudWatch balance series and the demand the bucket sees, both at one step, the last sample
taken at `now` (time is a parameter; nothing here reads a clock). The two arrays may differ in length (e.g.
only the latest balance is known); both are read backwards from `now`.

- gp2: `BurstBalance` (%) and the counted IOPS of the volume (256 KiB units, `headroom.domain.snapshot.views`).
- st1/sc1: `BurstBalance` (%) and the volume's MiB/s.
- instance EBS burst: `EBSIOBalance%` with the instance's IOPS, or `EBSByteBalance%` with its MiB/s
  (docs/reference/ec2-ebs-limits.md#the-burst-rule, docs/reference/cloudwatch.md#instance-ebs-metrics).

The bucket maths (capacity, baseline, burst rate, time to empty, refill) is `headroom.domain.physics.burst`; this
module only chooses the demand to feed it and reads the balance series:

1. Balance now = the last finite balance sample (CloudWatch sends none while a volume is idle, docs/reference/cloudwatch.md#volume-metrics; with no
   sample at all we assume a full bucket, as a new or idle volume has, and say so in `notes`).
2. Demand. The bucket is stepped (`CreditBucket.step`) along a projected demand until it empties:
   - with at least a day plus the recent window of history: yesterday's demand at the same time of day,
     shifted by (recent mean − yesterday's mean over the same window); where yesterday's bucket was empty the
     served figure is the baseline, not the demand, so those samples take the trend below;
   - otherwise the Theil-Sen trend of the recent window (default the last hour), extrapolated: a diurnal
     ramp is still climbing when the balance starts to fall, so the recent mean alone says "later";
   - unless the balance began to fall inside the recent window (after its last peak there): the demand since
     then is the demand draining the bucket. Seen for at least three 5-minute balance periods
     (`MIN_DRAIN_TREND_SECONDS`), its own Theil-Sen trend is the projection; seen for less, the recent
     window's trend with the drain's mean as its floor. An instance bucket (30 minutes at its maximum) loses
     its first 20 % in 6 minutes at the maximum, in ~24 at 400 MiB/s on an m6i.xlarge: when it reads 80 %,
     most of the hour predates the drain, and a line through the whole hour ignored that step (a forecast far
     too late, or never) or, on 12 five-minute points, read it as a ramp to the maximum (far too early).
   The band is the earliest / latest of: the point, the trend, and the constant p90 / p50 demand of the
   recent window, each by `seconds_to_empty = balance / (demand - baseline)` (docs/reference/gp2-burst.md#the-credit-bucket "Burst
   duration"; docs/reference/gp2-burst.md#burst-time-from-cloudwatch: 500 GiB at 100 % and 3,000 IOPS -> 3,600 s). `demand` is the mean since the balance
   began to fall inside the recent window, else the recent mean.
   Backtest on the simulator (bench/README.md): gp2 mean absolute error 19 % (7/9 inside the band),
   instance EBS byte bucket 1 % (9/9; 7 %, 9/9, with the batch's demand not clipped by the volume).
3. Cross-check: a Theil-Sen slope of the balance over the same window (points strictly between 0 and 100 %,
   where the bucket is neither full nor empty) gives an observed drain and its own time to empty; the band is
   widened to include it, and `slope_agrees` says whether it fell inside the physics band. The instance
   bucket is a model (capacity = 30 min × (maximum − baseline), see `headroom.domain.physics.burst`), so the
   observed slope is the check on it.
4. After the bucket empties the volume serves at most its baseline: `fallback_iops` / `fallback_mibps` from
   the catalog (gp2: 3 IOPS/GiB, docs/reference/gp2-burst.md#baseline-and-burst).
5. Refill: from empty (or from the current balance if it does not empty) at the off-peak demand (default
   p10 of the last 24 h), `(capacity − balance) / (baseline − demand)` (docs/reference/gp2-burst.md#the-credit-bucket "Refill time from empty =
   5.4e6 / baseline" at zero demand).

Public API (all return `BurstForecast`):

    forecast_gp2_burst(balance_pct, demand_iops, *, size_gib, step_seconds, now, ...)
    forecast_hdd_burst(balance_pct, demand_mibps, *, volume_type, size_gib, step_seconds, now, ...)
    forecast_instance_burst(balance_pct, demand, *, instance_type, kind="io"|"byte", step_seconds, now, ...)
    forecast_bucket(bucket, balance_pct, demand, *, step_seconds, now, fallback_iops, fallback_mibps, ...)
    BurstForecast.as_forecasts(label=None) -> [headroom.domain.model.Forecast]: burst_empty (+ refill), as a
        finding's evidence carries them

Which balance and which demand series a volume's or an instance's bucket is forecast from (the advisor's counted
IOPS and MiB/s on its window's grid) is `headroom.domain.advisor.buckets`: the rules and the charts call it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from headroom.domain import references as refs
from headroom.domain.catalog import InstanceLimits, instance_limits, volume_limits
from headroom.domain.model import Forecast
from headroom.domain.units import format_duration_words, format_quantity
from headroom.domain.physics.burst import CreditBucket, Gp2Bucket, HddThroughputBucket, InstanceEbsBucket

Array = NDArray[np.float64]

RECENT_SECONDS = 3600.0  # demand window for the time-to-empty estimate
OFF_PEAK_HISTORY_SECONDS = 24 * 3600.0  # look-back for the off-peak (refill) demand: one diurnal cycle
BAND_LOW_PERCENTILE = 50.0  # demand for the latest empty time
BAND_HIGH_PERCENTILE = 90.0  # demand for the earliest empty time
OFF_PEAK_PERCENTILE = 10.0
MIN_SLOPE_POINTS = 3
# The slope "agrees" within 25 % of the band edges: balances arrive rounded (whole percent on Nitro, docs/reference/cloudwatch.md#instance-ebs-metrics),
# so an hour's slope carries a few percent of resolution error, and demand is sampled, not integrated.
SLOPE_TOLERANCE = 0.25
MAX_PATH_POINTS = 721
MIN_HORIZON_SECONDS = 3600.0
MAX_HORIZON_SECONDS = 48 * 3600.0
PROFILE_SECONDS = 86400.0  # the demand profile looks one diurnal cycle back
# A drain seen for at least three of the balance's 5-minute periods (EBSIOBalance% / EBSByteBalance% are 5-minute
# metrics, docs/reference/cloudwatch.md#instance-ebs-metrics; as many points as the slope cross-check needs) is a regime of its own: the demand's line
# is fitted since the balance began to fall. A shorter drain only sets the projection's floor (docs/thresholds/burst.md).
MIN_DRAIN_TREND_SECONDS = MIN_SLOPE_POINTS * 300.0
# Where each bucket's rules are published (the forecast steps AWS's earn and spend rates).
SOURCE = refs.EBS_GP.cite("burst duration = credit balance / (burst IOPS - baseline)")


def source_for(kind: str) -> str:
    """Return the public document that defines a bucket of this kind (gp2, st1/sc1, or an instance's)."""
    if kind == "gp2":
        return SOURCE
    if kind in ("st1", "sc1"):
        return refs.EBS_HDD.cite("burst buckets")
    return refs.EBS_OPTIMIZED.cite("burst sizes: maximum for 30 minutes at least once every 24 hours")


REFILL_METHOD = (
    f"physics: (capacity - balance) / (baseline - demand) at the off-peak demand (p{format_quantity(OFF_PEAK_PERCENTILE, '')} of the "
    f"last {format_duration_words(OFF_PEAK_HISTORY_SECONDS)}), from empty, or from the balance now when it does not empty"
)


@dataclass(frozen=True)
class BalancePath:
    """A projected balance to chart: timestamps and percent at the point, low and high demand."""

    timestamps: tuple[datetime, ...]
    percent: tuple[float, ...]  # at the point demand
    percent_low_demand: tuple[float, ...]  # at the band's low demand (upper edge of the shaded band)
    percent_high_demand: tuple[float, ...]  # at the band's high demand (lower edge)


@dataclass(frozen=True)
class BurstForecast:
    """When a credit bucket empties at the recent demand, what it serves after, and how long refill takes.

    Seconds are from `now`; None means "never at that demand" (demand at or below the baseline, or a bucket
    that does not burst). `seconds_to_empty_low` is the earliest (high demand), `_high` the latest (low
    demand; None when the low demand never empties it). Rates are in `unit` (IOPS or MiB/s).
    """

    kind: str  # gp2 | st1 | sc1 | instance-io | instance-byte
    unit: str
    bursts: bool
    now: datetime
    balance_percent: float
    baseline: float
    burst_rate: float
    demand: float  # point demand: the mean since the balance began to fall in the recent window, else the recent mean
    demand_low: float
    demand_high: float
    seconds_to_empty: float | None
    seconds_to_empty_low: float | None
    seconds_to_empty_high: float | None
    empties_at: datetime | None
    empties_at_earliest: datetime | None
    empties_at_latest: datetime | None
    slope_percent_per_hour: float | None  # observed Theil-Sen slope of the balance (negative = draining)
    slope_seconds_to_empty: float | None  # time to empty implied by that slope
    slope_agrees: bool | None  # whether the slope's estimate fell inside the physics band (None: no slope)
    fallback_iops: float | None  # what the volume/instance serves once empty
    fallback_mibps: float | None
    off_peak_demand: float
    refill_seconds: float | None  # at off-peak demand, from empty (or from now if it does not empty)
    method: str
    path: BalancePath
    notes: tuple[str, ...] = field(default_factory=tuple)
    # Whether the point projection followed yesterday's demand at the same time (a day plus the recent window
    # of history), i.e. it already contains the next day's peak; else it extrapolates the recent trend.
    from_daily_profile: bool = False

    @property
    def empty_now(self) -> bool:
        """Whether the bucket is already empty."""
        return self.seconds_to_empty == 0.0

    def as_forecasts(self, label: str | None = None) -> list[Forecast]:
        """Return what a finding's evidence carries: when the bucket empties and, when known, the refill."""
        out = [
            Forecast(
                kind="burst_empty",
                label=label,
                within_seconds=self.seconds_to_empty,
                at=self.empties_at,
                earliest=self.empties_at_earliest,
                latest=self.empties_at_latest,
                value=self.baseline,
                unit=self.unit,
                demand=self.demand,
                balance_pct=self.balance_percent,
                method=self.method,
                source=source_for(self.kind),
            )
        ]
        if self.refill_seconds is not None:
            out.append(
                Forecast(
                    kind="refill",
                    label=label,
                    within_seconds=self.refill_seconds,
                    unit=self.unit,
                    demand=self.off_peak_demand,
                    method=REFILL_METHOD,
                    source=source_for(self.kind),
                )
            )
        return out


def _as_array(values: ArrayLike, name: str) -> Array:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional")
    return arr


def _window(values: Array, step_seconds: float, seconds: float) -> Array:
    n = max(1, int(round(seconds / step_seconds)))
    return values[-n:]


def _finite(values: Array) -> Array:
    return values[np.isfinite(values)]


def theil_sen_slope(t: Array, y: Array) -> float | None:
    """Return the median of pairwise slopes (Theil-Sen) of y over t, or None with fewer than two points."""
    if len(t) < 2:
        return None
    i, j = np.triu_indices(len(t), k=1)
    dt = t[j] - t[i]
    ok = dt != 0
    if not ok.any():
        return None
    return float(np.median((y[j] - y[i])[ok] / dt[ok]))


def _min_none(a: float | None, b: float | None) -> float | None:
    """Min where None means infinity (never)."""
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def _max_none(a: float | None, b: float | None) -> float | None:
    """Max where None means infinity (never)."""
    if a is None or b is None:
        return None
    return max(a, b)


def _at(now: datetime, seconds: float | None) -> datetime | None:
    return None if seconds is None else now + timedelta(seconds=seconds)


def _trajectory(
    bucket: CreditBucket, balance: float, demands: Array, dt: float, *, stop_when_empty: bool = False
) -> tuple[Array, float | None]:
    """Step the bucket through `demands` (one per `dt`); return (balance % after each step, seconds to empty).

    The same arithmetic as `CreditBucket.step` (headroom.domain.physics.burst), inlined: this loop is the
    advisor's hottest per-point path, and a method call per step cost more than the step itself.
    """
    if len(demands) and dt < 0:
        raise ValueError("dt_seconds must be non-negative")
    if bool(np.any(demands < 0)):
        raise ValueError("demand must be non-negative")
    cap, base, burst = bucket.capacity, bucket.baseline_rate, bucket.burst_rate
    targets = np.minimum(demands, burst if bucket.bursts else base).tolist()
    b = min(max(balance, 0.0), cap)
    empty_at: float | None = 0.0 if balance <= 0 else None
    stopped_at: int | None = None
    kept: list[float] = []  # the balance after each step; after an early stop the rest stays 0 (empty)
    keep = kept.append
    moves = dt != 0
    # `min(max(x, 0.0), cap)` written out (`0.0 if x < 0.0 else x`, then `cap if cap < y else y`: what max and
    # min return, NaN and -0.0 included): two builtin calls per step cost more than the step.
    for k, (d, target) in enumerate(zip(demands.tolist(), targets, strict=True)):
        before = b
        if moves:
            if target <= base:
                x = b + (base - target) * dt
                y = 0.0 if x < 0.0 else x
                b = cap if cap < y else y
            else:
                drain = target - base
                if b / drain >= dt:
                    x = b - drain * dt
                    y = 0.0 if x < 0.0 else x
                    b = cap if cap < y else y
                else:
                    b = 0.0
        if empty_at is None and b <= 0.0:
            # exact time inside the step: the drain is constant over it (headroom.domain.physics.burst.CreditBucket.step)
            drain = min(d, burst) - base
            empty_at = k * dt + (before / drain if drain > 0 else dt)
            if stop_when_empty:
                stopped_at = k
                break
        keep(b)
    balances = np.zeros(len(demands))
    balances[: len(kept)] = kept
    out: Array = np.full(len(demands), 100.0) if cap <= 0 else 100.0 * balances / cap
    if stopped_at is not None:
        out[stopped_at:] = 0.0
    return out, empty_at


def _draining_steps(balance: Array, step_seconds: float, recent_seconds: float) -> int | None:
    """Return how many of the last steps came after the balance's last peak in the recent window, when it has
    fallen since (the bucket has been draining for that long); None when it has not fallen (full, flat, rising
    to a new peak, or fewer than two samples) or when the peak is the window's first sample (it may have been
    falling since before the window: the whole window is the drain)."""
    rb = _window(balance, step_seconds, recent_seconds)
    known = np.flatnonzero(np.isfinite(rb))
    if len(known) < 2:
        return None
    peak = float(rb[known].max())
    if float(rb[known[-1]]) >= peak:
        return None
    last_peak = int(known[rb[known] == peak][-1])  # a 5-minute value held on a 1-minute grid: its last minute
    return None if last_peak == 0 else len(rb) - 1 - last_peak


def _trend_demand(recent: Array, step_seconds: float, steps: int) -> Array:
    """Extrapolate the recent demand's Theil-Sen line `steps` ahead (>= 0); flat when it cannot be fitted."""
    stride = max(1, len(recent) // 120)  # Theil-Sen is O(n²): 120 points are plenty for one line
    t = np.arange(len(recent), dtype=np.float64)[::stride] * step_seconds
    y = recent[::stride]
    slope = theil_sen_slope(t, y) or 0.0
    intercept = float(np.median(y - slope * t))
    ahead = (len(recent) - 1 + np.arange(1, steps + 1, dtype=np.float64)) * step_seconds
    return np.asarray(np.maximum(intercept + slope * ahead, 0.0), dtype=np.float64)


def _daily_profile(
    demand: Array, balance: Array, step_seconds: float, recent_seconds: float, steps: int, fill: Array,
    *, shifted: bool = True,
) -> Array | None:
    """Demand for the next `steps`: the same time yesterday, shifted by (recent mean − yesterday's mean then)
    unless `shifted` is False (yesterday's demand as it ran).

    An additive shift keeps "more demand never empties later" true (a scaled or raised demand history gives a
    scaled or raised profile). While yesterday's bucket was empty the volume served its baseline, not the
    demand (docs/reference/gp2-burst.md#the-credit-bucket): those samples hold the demand of the last sample
    before it emptied (the demand that emptied it; the bucket stays at 0 % only while demand is at or above the
    baseline, so the peak went on). Samples missing with nothing before them take `fill` (the recent trend).
    None without a day plus the recent window of history.
    """
    day = int(round(86400.0 / step_seconds))
    n_recent = max(1, int(round(recent_seconds / step_seconds)))
    if len(demand) < day + n_recent or steps > day:
        return None
    recent = demand[-n_recent:]
    then = demand[len(demand) - day - n_recent : len(demand) - day]
    if not (np.isfinite(recent).any() and np.isfinite(then).any()):
        return None
    shift = float(np.nanmean(recent)) - float(np.nanmean(then)) if shifted else 0.0
    start = len(demand) - day
    ahead = demand[start : start + steps].copy()
    if len(balance) == len(demand):
        empty = balance[: start + len(ahead)] <= 0.0
        served = demand[: start + len(ahead)]
        known = np.isfinite(served) & ~empty
        last_known = np.maximum.accumulate(np.where(known, np.arange(len(served)), -1))[start:]
        held = np.where(last_known >= 0, served[np.maximum(last_known, 0)], np.nan)
        ahead[empty[start:]] = held[empty[start:]]
    missing = ~np.isfinite(ahead)
    ahead[missing] = fill[: len(ahead)][missing] - shift
    return np.asarray(np.maximum(ahead + shift, 0.0), dtype=np.float64)


def forecast_bucket(
    bucket: CreditBucket,
    balance_pct: ArrayLike,
    demand: ArrayLike,
    *,
    step_seconds: float,
    now: datetime,
    fallback_iops: float | None,
    fallback_mibps: float | None,
    recent_seconds: float = RECENT_SECONDS,
    off_peak_history_seconds: float = OFF_PEAK_HISTORY_SECONDS,
    horizon_seconds: float | None = None,
) -> BurstForecast:
    """Forecast any credit bucket from its balance (%) and demand series (same step, last sample at `now`)."""
    if step_seconds <= 0:
        raise ValueError("step_seconds must be positive")
    if now.tzinfo is None:
        raise ValueError("now must carry a time zone")
    bal = _as_array(balance_pct, "balance_pct")
    dem = _as_array(demand, "demand")
    if len(dem) == 0:
        raise ValueError("demand is empty")
    notes: list[str] = []

    finite_bal = _finite(bal)
    if len(finite_bal):
        balance_percent = float(np.clip(finite_bal[-1], 0.0, 100.0))
    else:
        balance_percent = 100.0
        notes.append(
            "no balance sample: assumed a full bucket (CloudWatch sends none while idle: AWS CloudWatch metrics for EBS)"
        )
    balance = bucket.credits_from_percent(balance_percent)

    recent = _finite(_window(dem, step_seconds, recent_seconds))
    if len(recent) == 0:
        raise ValueError("demand has no finite value in the recent window")
    recent = np.maximum(recent, 0.0)
    # The demand since the balance began to fall inside the window is the demand draining the bucket now: a
    # batch that started 20 minutes ago is most of a 30-minute instance bucket's story but a third of the hour,
    # and a line through the whole hour either ignores that step or reads it as a ramp (bench/README.md, Burst).
    drain_steps = _draining_steps(bal, step_seconds, recent_seconds)
    draining = np.maximum(_finite(dem[-drain_steps:]), 0.0) if drain_steps else np.empty(0, dtype=np.float64)
    point = float(np.mean(draining)) if len(draining) else float(np.mean(recent))
    low = min(float(np.percentile(recent, BAND_LOW_PERCENTILE)), point)
    high = max(float(np.percentile(recent, BAND_HIGH_PERCENTILE)), point)
    history = _finite(_window(dem, step_seconds, off_peak_history_seconds))
    off_peak = max(float(np.percentile(history, OFF_PEAK_PERCENTILE)), 0.0)

    # Observed slope of the balance over the recent window, where the bucket is neither full nor empty.
    rb = _window(bal, step_seconds, recent_seconds)
    t = np.arange(len(rb), dtype=np.float64) * step_seconds
    inside = np.isfinite(rb) & (rb > 0.0) & (rb < 100.0)
    slope_pct_s: float | None = None
    if int(inside.sum()) >= MIN_SLOPE_POINTS:
        slope_pct_s = theil_sen_slope(t[inside], rb[inside])
    slope_stte: float | None = None
    if slope_pct_s is not None and slope_pct_s < 0 and balance_percent > 0:
        slope_stte = balance_percent / -slope_pct_s

    # With a day of history, project the demand as it ran at the same time yesterday (shifted to today's
    # level): a diurnal ramp is still climbing when the balance starts to fall, so the recent mean alone would
    # say "later" than it will be.
    day_steps = int(round(PROFILE_SECONDS / step_seconds))
    window = f"the last {format_duration_words(recent_seconds)}"
    trend_text = f"the Theil-Sen trend of the demand over {window}"
    if len(draining) and drain_steps is not None:
        since = f"the balance began to fall ({format_duration_words(drain_steps * step_seconds)} ago)"
        if drain_steps * step_seconds >= MIN_DRAIN_TREND_SECONDS:
            trend = _trend_demand(draining, step_seconds, day_steps)
            trend_text = f"the Theil-Sen trend of the demand since {since}"
        else:
            # too few periods for a line of its own: the hour's line (a ramp still climbing), never below the
            # mean demand that made the balance fall (a step up: the hour's line ignores it)
            trend = np.maximum(_trend_demand(recent, step_seconds, day_steps), point)
            trend_text += f", at least its mean since {since}"
    else:
        trend = _trend_demand(recent, step_seconds, day_steps)
    profile = None
    if bucket.bursts and balance > 0:
        profile = _daily_profile(dem, bal, step_seconds, recent_seconds, day_steps, trend)
    point_demands_fine = trend

    if not bucket.bursts:
        method = "no-burst: the bucket does not burst (baseline >= burst), nothing to empty"
        stte = s_low = s_high = None
        slope_agrees: bool | None = None
    elif balance <= 0.0:
        method = "empty: the balance is 0 %, the bucket serves its baseline now"
        stte = s_low = s_high = 0.0
        slope_agrees = None
    else:
        s_low = bucket.seconds_to_empty(balance, high)
        s_high = bucket.seconds_to_empty(balance, low)
        _, stte = _trajectory(bucket, balance, trend, float(step_seconds), stop_when_empty=True)
        s_low = _min_none(s_low, stte)
        s_high = _max_none(s_high, stte)
        method = (
            f"physics: {bucket.kind} credit bucket (AWS's earn and spend rates) stepped along {trend_text} "
            "(no time given when it does not empty within a day)"
        )
        if profile is not None:
            _, stte = _trajectory(bucket, balance, profile, float(step_seconds), stop_when_empty=True)
            point_demands_fine = profile
            s_low = _min_none(s_low, stte)
            s_high = _max_none(s_high, stte)
            method = (
                f"physics: {bucket.kind} credit bucket (AWS's earn and spend rates) stepped along yesterday's demand at "
                f"the same time, shifted to {window} (no time given when it does not empty within a day)"
            )
            # Yesterday's demand as it ran is one member of the band: a quiet hour a little below the same hour
            # yesterday moves the shifted profile down, and a peak that emptied the bucket yesterday must not
            # become "never" for it. Never empties needs both to say so (docs/thresholds/burst.md).
            as_ran = _daily_profile(dem, bal, step_seconds, recent_seconds, day_steps, trend, shifted=False)
            if as_ran is not None:
                _, as_ran_stte = _trajectory(bucket, balance, as_ran, float(step_seconds), stop_when_empty=True)
                s_low = _min_none(s_low, as_ran_stte)
                s_high = _max_none(s_high, as_ran_stte)
                if stte is None and as_ran_stte is not None:
                    stte = as_ran_stte
                    point_demands_fine = as_ran
                    notes.append(
                        f"the demand over {window} is below the same time yesterday, but yesterday's demand as it ran "
                        "empties the bucket: a quieter hour is not evidence that the coming peak is lower"
                    )
                method += "; yesterday's demand unshifted is in the band"
        method += (
            f"; band: that, the demand trend, and the constant p{format_quantity(BAND_LOW_PERCENTILE, '')} / "
            f"p{format_quantity(BAND_HIGH_PERCENTILE, '')} of the demand over {window}"
        )
        slope_agrees = None
        if slope_pct_s is not None:
            lo = s_low if s_low is not None else math.inf
            hi = s_high if s_high is not None else math.inf
            est = slope_stte if slope_stte is not None else math.inf
            slope_agrees = lo * (1.0 - SLOPE_TOLERANCE) <= est <= hi * (1.0 + SLOPE_TOLERANCE)
            if not slope_agrees:
                method += "; band widened to the observed balance slope"
                notes.append("the observed balance slope disagrees with the modelled bucket")
                s_low = _min_none(s_low, slope_stte)
                s_high = _max_none(s_high, slope_stte)

    refill_from = 0.0 if stte is not None else balance
    refill = bucket.refill_seconds(refill_from, off_peak)

    # The path to chart: the point demand (the profile when there is one) and the band's two constant demands.
    if horizon_seconds is None:
        finite = [x for x in (s_high, stte, s_low) if x]
        horizon_seconds = 2.0 * max(finite) if finite else 6 * 3600.0
        horizon_seconds = min(max(horizon_seconds, MIN_HORIZON_SECONDS), MAX_HORIZON_SECONDS)
    path_dt = max(float(step_seconds), horizon_seconds / (MAX_PATH_POINTS - 1))
    steps = int(horizon_seconds // path_dt)
    idx = np.minimum((np.arange(steps) * path_dt / step_seconds).astype(int), len(point_demands_fine) - 1)
    point_demands = point_demands_fine[idx]
    start_pct = bucket.percent(balance)

    def _path(demands: Array) -> tuple[float, ...]:
        return (start_pct, *_trajectory(bucket, balance, demands, path_dt)[0].tolist())

    path = BalancePath(
        timestamps=tuple(now + timedelta(seconds=i * path_dt) for i in range(steps + 1)),
        percent=_path(point_demands),
        percent_low_demand=_path(np.full(steps, low)),
        percent_high_demand=_path(np.full(steps, high)),
    )
    return BurstForecast(
        kind=bucket.kind,
        unit=bucket.unit,
        bursts=bucket.bursts,
        now=now,
        balance_percent=balance_percent,
        baseline=bucket.baseline_rate,
        burst_rate=bucket.burst_rate,
        demand=point,
        demand_low=low,
        demand_high=high,
        seconds_to_empty=stte,
        seconds_to_empty_low=s_low,
        seconds_to_empty_high=s_high,
        empties_at=_at(now, stte),
        empties_at_earliest=_at(now, s_low),
        empties_at_latest=_at(now, s_high),
        slope_percent_per_hour=None if slope_pct_s is None else slope_pct_s * 3600.0,
        slope_seconds_to_empty=slope_stte,
        slope_agrees=slope_agrees,
        fallback_iops=fallback_iops,
        fallback_mibps=fallback_mibps,
        off_peak_demand=off_peak,
        refill_seconds=refill,
        method=method,
        path=path,
        notes=tuple(notes),
        from_daily_profile=profile is not None and bucket.bursts and balance > 0.0,
    )


def forecast_gp2_burst(
    balance_pct: ArrayLike | Sequence[float],
    demand_iops: ArrayLike | Sequence[float],
    *,
    size_gib: float,
    step_seconds: float,
    now: datetime,
    recent_seconds: float = RECENT_SECONDS,
    horizon_seconds: float | None = None,
) -> BurstForecast:
    """Forecast a gp2 volume's I/O credits from BurstBalance (%) and its counted IOPS (last sample at now)."""
    limits = volume_limits("gp2", size_gib)
    return forecast_bucket(
        Gp2Bucket.for_size(size_gib),
        balance_pct,
        demand_iops,
        step_seconds=step_seconds,
        now=now,
        fallback_iops=limits.baseline_iops,  # docs/reference/gp2-burst.md#baseline-and-burst: 3 IOPS/GiB, min 100
        fallback_mibps=limits.baseline_throughput_mibps,
        recent_seconds=recent_seconds,
        horizon_seconds=horizon_seconds,
    )


def forecast_hdd_burst(
    balance_pct: ArrayLike | Sequence[float],
    demand_mibps: ArrayLike | Sequence[float],
    *,
    volume_type: Literal["st1", "sc1"],
    size_gib: float,
    step_seconds: float,
    now: datetime,
    recent_seconds: float = RECENT_SECONDS,
    horizon_seconds: float | None = None,
) -> BurstForecast:
    """Forecast an st1/sc1 volume's throughput credits from BurstBalance (%) and its MiB/s."""
    limits = volume_limits(volume_type, size_gib)
    return forecast_bucket(
        HddThroughputBucket.for_volume(volume_type, size_gib),
        balance_pct,
        demand_mibps,
        step_seconds=step_seconds,
        now=now,
        fallback_iops=limits.baseline_iops,
        fallback_mibps=limits.baseline_throughput_mibps,  # docs/reference/ebs-volume-types.md#limits-per-volume-type: 40 (st1) / 12 (sc1) MiB/s per TiB
        recent_seconds=recent_seconds,
        horizon_seconds=horizon_seconds,
    )


def forecast_instance_burst(
    balance_pct: ArrayLike | Sequence[float],
    demand: ArrayLike | Sequence[float],
    *,
    instance_type: str,
    kind: Literal["io", "byte"],
    step_seconds: float,
    now: datetime,
    recent_seconds: float = RECENT_SECONDS,
    horizon_seconds: float | None = None,
    limits: InstanceLimits | None = None,
) -> BurstForecast:
    """Forecast an instance's EBS burst from EBSIOBalance% + IOPS (kind="io") or EBSByteBalance% + MiB/s.

    `limits` are the type's resolved limits (headroom.domain.catalog.resolve); without them, the catalog's.
    """
    limits = limits if limits is not None else instance_limits(instance_type)
    bucket = InstanceEbsBucket.for_iops(limits) if kind == "io" else InstanceEbsBucket.for_throughput(limits)
    return forecast_bucket(
        bucket,
        balance_pct,
        demand,
        step_seconds=step_seconds,
        now=now,
        # docs/reference/ec2-ebs-limits.md#the-burst-rule: after the 30-minute burst the instance "revert[s] to their baseline performance"
        fallback_iops=limits.baseline_iops,
        fallback_mibps=limits.baseline_throughput_mibps,
        recent_seconds=recent_seconds,
        horizon_seconds=horizon_seconds,
    )
