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


def scaled(c: Columns, factor: float) -> Columns:
    """Multiply every aggregate by a constant (a Sum per step -> a rate, bytes -> MiB): exact for max/min too."""
    return Columns(c.t, c.avg * factor, c.max * factor, c.min * factor)


def combine(parts: Sequence[Columns], fn: Callable[..., Array], *, exact_extremes: bool) -> Columns:
    """Apply `fn` to the aligned averages of several series. Max/min of a combination can't be had from the
    parts' max/min, so they are kept only for raw points (where avg = max = min); otherwise NaN."""
    grid, aligned = align(parts)
    # A series with no point at all in the window (e.g. a volume that only reads) counts as zero, not a gap.
    aligned = [a if len(p) else Columns(grid, np.zeros(grid.size), a.max, a.min) for a, p in zip(aligned, parts,
                                                                                                strict=True)]
    with np.errstate(invalid="ignore", divide="ignore"):
        avg = fn(*(a.avg for a in aligned))
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
