"""The lookback a change that removes capacity is judged on: its choices and the peak of one entity over it.

AWS Compute Optimizer looks back 14 days by default and 32 or 93 days on request (its `lookBackPeriod`
recommendation preference; docs/reference/lookback.md). Headroom does the same for every change that cuts
IOPS, throughput or an instance's EBS limits: the cut is sized on the peak over the lookback, and held until that
much history exists.

The peak is counted as the advisor counts it, by the one derivation (`views.io_view_of`, `derived.IoView`):
the store hands over each I/O sum on a 5-minute or hourly grid (the rollups' sums) and this module derives
counted IOPS and MiB/s from them, so a lookback peak and a window peak are the same quantity at another step.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

import numpy as np
from numpy.typing import NDArray

from headroom.domain.snapshot.schema import Entity, EntityKind, LookbackDays, LookbackPeak, Window
from headroom.domain.snapshot.views import io_view_of

Array = NDArray[np.float64]

LOOKBACK_CHOICES: tuple[LookbackDays, ...] = (14, 32, 93)  # Compute Optimizer's DAYS_14 | DAYS_32 | DAYS_93
DEFAULT_LOOKBACK_DAYS: LookbackDays = 14


def effective_lookback_days(org_days: int, cluster_days: int | None) -> LookbackDays:
    """Return the lookback in force: the cluster's own, else its organisation's (a resource-level preference wins,
    as in Compute Optimizer); a value that is not one of the choices reads as the default."""
    days = cluster_days if cluster_days is not None else org_days
    for choice in LOOKBACK_CHOICES:
        if days == choice:
            return choice
    return DEFAULT_LOOKBACK_DAYS


def history_days(first_point: datetime | None, end: datetime, lookback_days: int) -> float:
    """Return the days of history between the first stored point and `end`, at most the lookback (0 without one)."""
    if first_point is None or first_point >= end:
        return 0.0
    return min((end - first_point).total_seconds() / 86400.0, float(lookback_days))


def _peak_at(values: Array, window: Window) -> tuple[float | None, datetime | None]:
    if values.size == 0 or bool(np.all(np.isnan(values))):
        return None, None
    i = int(np.nanargmax(values))
    return float(values[i]), window.start + timedelta(seconds=i * window.step_seconds)


def peak_over(
    kind: EntityKind,
    entity_id: str,
    grids: Sequence[tuple[Window, Callable[[str], Array | None]]],
    chunk_kib: int,
    history: float,
) -> LookbackPeak:
    """Return an entity's peak counted IOPS and MiB/s over several grids (the 5-minute and the hourly rollups of
    the lookback); each grid's `read(metric)` gives that I/O sum's values on it (None when absent)."""
    best_iops: tuple[float | None, datetime | None] = (None, None)
    best_mibps: tuple[float | None, datetime | None] = (None, None)
    for window, read in grids:
        view = io_view_of(kind, window, read, chunk_kib)
        for current, values, slot in (
            (best_iops, view.counted_iops, "iops"),
            (best_mibps, view.mibps, "mibps"),
        ):
            value, at = _peak_at(values, window)
            if value is not None and (current[0] is None or value > current[0]):
                if slot == "iops":
                    best_iops = (value, at)
                else:
                    best_mibps = (value, at)
    return LookbackPeak(
        entity=Entity(kind=kind, id=entity_id),
        history_days=round(max(history, 0.0), 4),
        peak_iops=None if best_iops[0] is None or math.isnan(best_iops[0]) else round(best_iops[0], 3),
        peak_iops_at=best_iops[1],
        peak_mibps=None if best_mibps[0] is None or math.isnan(best_mibps[0]) else round(best_mibps[0], 3),
        peak_mibps_at=best_mibps[1],
    )
