"""Peak-keeping downsampling of a series for a chart: M4 (Jugel et al., "M4: A Visualization-Oriented Time Series
Data Aggregation", PVLDB 7(10), 2014). The time axis is cut into equal spans; of each span's points the first, the
lowest, the highest and the last are kept, so a line drawn through them has the same extremes as the full series:
a single sample at a ceiling survives, where a mean per span would hide it. The kept points are real samples.

Pure: arrays in, indices out. Why M4 and the point budget the metrics API allows: docs/metrics-downsampling.md.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

# M4 keeps up to four points a span: first, lowest, highest, last.
POINTS_PER_SPAN = 4


def spans_for(budget: int) -> int:
    """The number of equal time spans whose M4 points fit `budget` points (at least one)."""
    return max(1, budget // POINTS_PER_SPAN)


def span_seconds(start: int, end: int, budget: int) -> int:
    """Return the seconds one span covers when [start, end) is cut for `budget` points (rounded up)."""
    return max(1, math.ceil((end - start) / spans_for(budget)))


def m4_indices(t: NDArray[np.int64], values: NDArray[np.float64], budget: int, *, start: int,
               end: int) -> NDArray[np.intp]:
    """Indices (ascending) of at most `budget` points of a series sorted by time: the first, lowest, highest and
    last finite point of each of `budget // 4` equal spans of [start, end). A series of at most `budget` points
    comes back whole; NaN (a gap) is never picked as an extreme; ties keep the earliest minimum and the latest
    maximum. Points before `start` or from `end` on count in the first or last span."""
    if budget < POINTS_PER_SPAN:
        raise ValueError(f"budget must be at least {POINTS_PER_SPAN} points, got {budget}")
    if end <= start:
        raise ValueError("start must be before end")
    n = t.size
    if n <= budget:
        return np.arange(n, dtype=np.intp)
    finite = np.flatnonzero(np.isfinite(values))
    if finite.size == 0:
        return np.empty(0, dtype=np.intp)
    tf, vf = t[finite], values[finite]
    spans = spans_for(budget)
    span = np.clip((tf - start) * spans // (end - start), 0, spans - 1)
    # t is sorted, so each span's points are one run: its first and last positions bound it.
    starts = np.r_[True, span[1:] != span[:-1]]
    first = np.flatnonzero(starts)
    last = np.r_[first[1:] - 1, span.size - 1]
    run = np.cumsum(starts) - 1  # each point's run
    # Each run's extremes by one pass per run (reduceat), then the earliest point at its minimum and the latest at
    # its maximum: linear, where sorting the values by run cost n log n.
    lowest = np.flatnonzero(vf == np.minimum.reduceat(vf, first)[run])
    lowest = lowest[np.r_[True, run[lowest[1:]] != run[lowest[:-1]]]]
    highest = np.flatnonzero(vf == np.maximum.reduceat(vf, first)[run])
    highest = highest[np.r_[run[highest[1:]] != run[highest[:-1]], True]]
    keep = np.zeros(span.size, dtype=bool)
    keep[first] = keep[last] = keep[lowest] = keep[highest] = True
    out: NDArray[np.intp] = finite[np.flatnonzero(keep)]
    return out
