"""Column maths on stored series (pure over `Columns`): put several series on one grid, scale a Sum per step to a
rate, combine series into a derived one, the period a point covers, and a balance's value held across its period.

The metrics charts and the glance table use these; the derived formulas themselves (counted IOPS, latency, hit
ratio) are headroom.domain.derived's, the advisor's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from headroom.timeseries.repository import Columns

Array = NDArray[np.float64]
Statistic = Literal["avg", "max", "min"]


def align(series: Sequence[Columns]) -> tuple[NDArray[np.int64], list[Columns]]:
    """Put several series on the union of their timestamps (NaN where one has no point)."""
    if not series:
        return np.empty(0, np.int64), []
    grid = np.unique(np.concatenate([s.t for s in series])) if any(len(s) for s in series) else np.empty(0, np.int64)
    out = []
    for s in series:
        idx = np.searchsorted(grid, s.t)
        cols = []
        for arr in (s.avg, s.max, s.min):
            full = np.full(grid.size, np.nan)
            full[idx] = arr
            cols.append(full)
        out.append(Columns(grid, *cols))
    return grid, out


def _averages_on_one_grid(series: Sequence[Columns]) -> tuple[NDArray[np.int64], list[Array]]:
    """The averages of align(series), without its max/min: series already on one increasing grid (the usual
    case: the same metric family read at one resolution) are copied as they are, skipping the union."""
    first = series[0].t if series else None
    if first is not None and all(s.t is first or np.array_equal(s.t, first) for s in series[1:]) \
            and (first.size < 2 or bool((np.diff(first) > 0).all())):
        return first, [s.avg.copy() for s in series]
    grid, aligned = align(series)
    return grid, [a.avg for a in aligned]


def scaled(c: Columns, factor: float) -> Columns:
    """Multiply every aggregate by a constant (a Sum per step -> a rate, bytes -> MiB): exact for max/min too."""
    return Columns(c.t, c.avg * factor, c.max * factor, c.min * factor)


def combine(parts: Sequence[Columns], fn: Callable[..., Array], *, exact_extremes: bool) -> Columns:
    """Apply `fn` to the aligned averages of several series. Max/min of a combination can't be had from the
    parts' max/min, so they are kept only for raw points (where avg = max = min); otherwise NaN."""
    grid, averages = _averages_on_one_grid(parts)
    # A series with no point at all in the window (e.g. a volume that only reads) counts as zero, not a gap.
    averages = [a if len(p) else np.zeros(grid.size) for a, p in zip(averages, parts, strict=True)]
    with np.errstate(invalid="ignore", divide="ignore"):
        avg = fn(*averages)
    avg = np.where(np.isfinite(avg), avg, np.nan)
    if exact_extremes:
        return Columns(grid, avg, avg.copy(), avg.copy())
    nan = np.full(grid.size, np.nan)
    return Columns(grid, avg, nan, nan.copy())


def point_step(c: Columns, resolution: int) -> int:
    """Return the seconds one point of a series covers: the resolution, or the series' own period when that is
    longer (a 5-minute AWS/EC2 series on a raw, 1-minute chart): the shortest distance between its points."""
    if c.t.size < 2:
        return resolution
    return max(resolution, int(np.diff(c.t).min()))


def drop_empty(c: Columns) -> Columns:
    keep = np.isfinite(c.avg)
    return Columns(c.t[keep], c.avg[keep], c.max[keep], c.min[keep])


def held_at(balance: Columns | None, statistic: Statistic, t: NDArray[np.int64], step: int) -> Array | None:
    """A balance series' value in force at each timestamp: the point whose period [t_b, t_b + step) holds it
    (a 5-minute EBSIOBalance% is held across its five minutes, docs/series-alignment.md); NaN where none."""
    if balance is None or not len(balance):
        return None
    column = {"avg": balance.avg, "max": balance.max, "min": balance.min}[statistic]
    column = np.where(np.isfinite(column), column, balance.avg)
    idx = np.searchsorted(balance.t, t, side="right") - 1
    ok = (idx >= 0) & (t - balance.t[np.clip(idx, 0, None)] < step)
    return np.where(ok, column[np.clip(idx, 0, None)], np.nan)
