"""When a stored forecast path reaches a ceiling (pure): days from a moment to the first crossing of the point
path and of the band's edges, without refitting. Used when the ceiling a projection was fitted against has
moved (a what-if raises a volume's IOPS; the advisor reads today's limits), so a projection fitted once a day
answers for any ceiling at once.

    band_crossing(t, point, low, high, ceiling, since) -> Crossing(days, days_low, days_high)

`days` is the first time `point` >= ceiling; `days_low` (earliest) the first time `high` >= ceiling;
`days_high` (latest) the first time `low` >= ceiling; each None when not within the path. Days count from
`since` (the end of the history, or now); a crossing before `since` counts as 0. The path's resolution (the
stored path keeps every 6th hour) bounds the answer's: it is the first stored time at or above the ceiling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

DAY_SECONDS = 86_400.0


@dataclass(frozen=True)
class Crossing:
    days: float | None
    days_low: float | None  # earliest (the band's upper edge)
    days_high: float | None  # latest (the band's lower edge); None: not within the path


def _first(t: Sequence[datetime], values: Sequence[float], ceiling: float, since: datetime) -> float | None:
    for at, value in zip(t, values, strict=True):
        if value >= ceiling:
            return max((at - since).total_seconds() / DAY_SECONDS, 0.0)
    return None


def band_crossing(
    t: Sequence[datetime],
    point: Sequence[float],
    low: Sequence[float],
    high: Sequence[float],
    ceiling: float,
    since: datetime,
) -> Crossing:
    """Return the days from `since` until the path and its band first reach `ceiling` (see the module)."""
    if ceiling <= 0:
        raise ValueError("ceiling must be > 0")
    days, days_low, days_high = (_first(t, path, ceiling, since) for path in (point, high, low))
    # keep earliest <= point <= latest (a stored path is rounded; the point is clamped into its band)
    if days is not None:
        days_low = days if days_low is None else min(days_low, days)
        days_high = None if days_high is None else max(days_high, days)
    elif days_low is not None and days_high is not None:
        days_high = None
    return Crossing(days=days, days_low=days_low, days_high=days_high)


def level_at(t: Sequence[datetime], values: Sequence[float], at: datetime) -> float | None:
    """The path's largest value up to `at` (a fix sized for a horizon must hold at every point before it)."""
    seen = [v for when, v in zip(t, values, strict=True) if when <= at]
    return max(seen) if seen else None
