"""Put a series on the snapshot window's grid: the one place series of different periods are aligned.

A snapshot's series keep the period they were delivered at (CloudWatch: 1 minute for AWS/EBS, 5 minutes for
AWS/EC2 on basic monitoring and always for EBSIOBalance% / EBSByteBalance%; docs/reference/cloudwatch.md#volume-metrics, docs/reference/cloudwatch.md#instance-ebs-metrics), so a series'
`step_seconds` may differ from the window's. Everything that compares series (the advisor's Context, the snapshot
views, the what-if) reads them through `align`, which returns exactly `window.points` values at the window's
start + i x step. The method (docs/series-alignment.md):

- Time-weighted over the overlap of each window step with the series' periods. A period's value applies to every
  second of it; a window step takes the part of each period it overlaps.
- `Sum` (a CloudWatch total over the period, e.g. VolumeReadOps): the period's total is spread evenly over its
  seconds, so a window step gets (total / period) x (seconds of the step): the per-second rate is kept and the
  window's totals add up to the series'. A 5-minute Sum of 300 reads becomes 60 per 1-minute step, i.e.
  1 read/s either way. Finer Sums are added up over the step: a window step covered only in part (a missing
  minute) takes the rate of the part that is present, x the step's seconds.
- Gauges (Average, rate, gauge, count such as a CPU count): the time-weighted mean, so a coarser value is held
  across its period and finer values are averaged.
- Minimum / Maximum / p99: the lowest / highest value of the periods the step overlaps (a 5-minute Minimum of a
  balance is held for its 5 minutes; 1-minute Maxima over a 5-minute step keep the highest).
- Gaps stay gaps: a window step no present period overlaps is NaN; a period that starts before the window or
  ends after it (a partial first or last period) contributes only its overlap.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from headroom.domain.snapshot.schema import Series, Window

Array = NDArray[np.float64]
Method = Literal["sum", "mean", "min", "max"]

__all__ = ["Method", "align", "align_series", "method_of"]

# The one statistic whose values are totals over the period; every other statistic is a level.
_SUMS = frozenset({"Sum"})


def method_of(statistic: str) -> Method:
    """Return how a statistic combines over time: Sum adds, Minimum takes the lowest, Maximum/p99 the highest,
    everything else (Average, rate, gauge, count) is a level averaged over time."""
    if statistic in _SUMS:
        return "sum"
    if statistic == "Minimum":
        return "min"
    if statistic in ("Maximum", "p99"):
        return "max"
    return "mean"


def align(
    values: ArrayLike,
    *,
    start: datetime,
    step_seconds: int,
    statistic: str,
    grid_start: datetime,
    grid_step_seconds: int,
    points: int,
) -> Array:
    """Return a series (values every `step_seconds` from `start`) on the grid grid_start + i x grid_step, i < points.

    See the module docstring for the method; the result has exactly `points` values, NaN where no value is known.
    """
    if step_seconds <= 0 or grid_step_seconds <= 0:
        raise ValueError("steps must be positive")
    v = np.asarray(values, dtype=np.float64)
    out: Array = np.full(max(points, 0), np.nan)
    if points <= 0 or v.size == 0:
        return out
    offset = round((start - grid_start).total_seconds())
    if offset == 0 and step_seconds == grid_step_seconds:
        n = min(points, v.size)
        out[:n] = v[:n]
        return out
    how = method_of(statistic)
    if step_seconds % grid_step_seconds == 0 and offset % grid_step_seconds == 0:
        # Coarser periods on whole grid steps (5-minute CloudWatch periods on a 1-minute window): every window
        # step lies inside exactly one period, so it takes that period's value (a Sum its per-second rate x the
        # step), the same arithmetic as the cell pass below with one cell per step, done once per period and
        # repeated over the period's steps. Window step i lies in period (i - o) // k.
        k, o = step_seconds // grid_step_seconds, offset // grid_step_seconds
        if how == "sum":
            per_period = (v / step_seconds + 0.0) * grid_step_seconds  # + 0.0: the cell sum's -0.0 -> 0.0
        elif how == "mean":
            per_period = v + 0.0
        else:
            per_period = v
        first, stop = max(0, o), min(points, v.size * k + o)
        if stop > first:
            out[first:stop] = np.repeat(per_period, k)[first - o : stop - o]
        return out
    # A common resolution at which both grids' boundaries fall on whole cells: the gcd of both steps and the
    # offset between their starts (60 s for CloudWatch's periods on minute-aligned windows).
    cell = math.gcd(math.gcd(step_seconds, grid_step_seconds), abs(offset)) or math.gcd(
        step_seconds, grid_step_seconds
    )
    per_step = grid_step_seconds // cell
    t = np.arange(points * per_step, dtype=np.int64) * cell  # each cell's start, seconds from grid_start
    index = (t - offset) // step_seconds  # the series period each cell lies in
    inside = (index >= 0) & (index < v.size)
    flat = np.full(t.size, np.nan)
    flat[inside] = v[index[inside]]
    if how == "sum":
        flat /= step_seconds  # the period's total spread evenly: a per-second rate in every cell
    cells = flat.reshape(points, per_step)
    present = ~np.isnan(cells)
    count = present.sum(axis=1)
    known = count > 0
    if how in ("sum", "mean"):
        total = np.where(present, cells, 0.0).sum(axis=1)
        level = np.divide(total, count, out=np.zeros(points), where=known)
        out[known] = level[known] * (grid_step_seconds if how == "sum" else 1.0)
    elif how == "min":
        out[known] = np.where(present, cells, np.inf).min(axis=1)[known]
    else:
        out[known] = np.where(present, cells, -np.inf).max(axis=1)[known]
    return out


def align_series(series: Series, window: Window) -> Array:
    """Return a snapshot series on its window's grid (`window.points` values; see `align`)."""
    return align(
        series.array,
        start=series.start,
        step_seconds=series.step_seconds,
        statistic=series.statistic,
        grid_start=window.start,
        grid_step_seconds=window.step_seconds,
        points=window.points,
    )
