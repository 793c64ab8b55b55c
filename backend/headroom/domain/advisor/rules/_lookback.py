"""Judge a cut on the lookback: the peak a change that removes capacity must keep, or why it is held.

A day cannot justify a cut: a Sunday batch is not in Tuesday's 24 hours. As AWS Compute Optimizer does (14 days
by default, 32 or 93 on request; docs/reference/lookback.md), a cut (a cheaper volume configuration, a smaller
or cheaper instance) is sized on max(the window's peak, the lookback's peak), and held while the history behind
the entity is shorter than the lookback ("insufficient data" in Compute Optimizer's words). Risk rules keep the
window: they judge what is happening now.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from headroom.domain.advisor.context import Array, Context
from headroom.domain.units import format_days, format_moment, format_quantity


@dataclass(frozen=True)
class Judged:
    """The peak a cut is sized on, or the reason it is held."""

    lookback_days: int
    history_days: float
    iops: float
    iops_at: datetime | None
    mibps: float
    mibps_at: datetime | None

    @property
    def held(self) -> bool:
        """Whether the history is shorter than the lookback (no cut is proposed yet)."""
        return self.history_days + 1e-9 < self.lookback_days

    def held_text(self) -> str:
        """Say why the cut waits: "needs 14 days of history, has 3 days"."""
        return (
            f"needs {format_days(self.lookback_days)} of history, has "
            f"{format_days(math.floor(self.history_days + 1e-9))}"
        )

    def peak_text(self) -> str:
        """Say what the cut is judged on: "judged on the peak of the last 14 days: 2,950 IOPS on Sun 11 Jan ..."."""
        iops = format_quantity(self.iops, "IOPS") + (f" on {format_moment(self.iops_at)}" if self.iops_at else "")
        mibps = format_quantity(self.mibps, "MiB/s") + (
            f" on {format_moment(self.mibps_at)}" if self.mibps_at else ""
        )
        return f"judged on the peak of the last {format_days(self.lookback_days)}: {iops}; {mibps}"


def argmax_at(ctx: Context, values: Array) -> datetime | None:
    """Return when a window series peaks (None when it has no point)."""
    if values.size == 0 or bool(np.all(np.isnan(values))):
        return None
    return ctx.window.start + timedelta(seconds=int(np.nanargmax(values)) * ctx.step_seconds)


def judge_cut(
    ctx: Context,
    kind: str,
    entity_id: str,
    window_iops: float,
    window_iops_at: datetime | None,
    window_mibps: float,
    window_mibps_at: datetime | None,
) -> Judged:
    """Return the peak a cut of this entity must keep: the higher of the window's and the lookback's, per
    dimension, with when it happened; `held` when the history is shorter than the lookback."""
    found = ctx.lookback_peak(kind, entity_id)
    iops, iops_at = window_iops, window_iops_at
    mibps, mibps_at = window_mibps, window_mibps_at
    if found is not None:
        if found.peak_iops is not None and found.peak_iops > iops:
            iops, iops_at = found.peak_iops, found.peak_iops_at
        if found.peak_mibps is not None and found.peak_mibps > mibps:
            mibps, mibps_at = found.peak_mibps, found.peak_mibps_at
    return Judged(ctx.lookback_days, ctx.history_days(kind, entity_id), iops, iops_at, mibps, mibps_at)
