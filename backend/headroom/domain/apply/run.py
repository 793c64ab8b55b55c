"""Judging a step of an apply run (docs/apply.md, docs/thresholds/apply-guards.md). Pure: numbers in, verdicts out.

After each step the run reads every guard's metric on what the step touched over three windows of the guard's
length: just before the step, just after it, and the same hours one week earlier (so a daily or weekly cycle is
not mistaken for the step). A guard trips when the p99 after the step is above its factor times the p99 before
it and above its floor (guards.tripped), unless the same hours of last week were as high (the rise is the usual
cycle, not the step). A window without data trips it: a run is never judged blind.

The watch ends at the later of its set period and the first point after the step of every guard that has points
before it (a source's points arrive after the minute they describe: CloudWatch's minutes later), but no later
than WATCH_GRACE_MINUTES past the set period; then a guard still without data trips (watch_state).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from headroom.domain.apply.guards import WATCH_GRACE_MINUTES, Guard, tripped
from headroom.domain.units import format_quantity


class GuardReading(BaseModel):
    """One guard's numbers after one step, and the verdict in words."""

    model_config = ConfigDict(frozen=True)

    metric: str
    label: str
    unit: str
    entities: list[str] = Field(description="What was read: the volumes or TiKV stores the step touched.")
    before: float | None = Field(description="p99 over the window before the step (null: no data).")
    after: float | None = Field(description="p99 over the window after the step (null: no data).")
    last_week: float | None = Field(description="p99 over the same hours one week earlier (null: no data).")
    predicted: float | None = Field(description="What the finding predicted for this metric (its own metric only).")
    tripped: bool
    verdict: str = Field(description="The comparison in words.")


def p99(values: Sequence[float]) -> float | None:
    """Return the 99th percentile of the finite values (linear interpolation, numpy's default), None without any."""
    finite = [v for v in values if v is not None and math.isfinite(v)]
    if not finite:
        return None
    return float(np.percentile(np.asarray(finite, dtype=np.float64), 99))


def _q(value: float | None, unit: str) -> str:
    return "no data" if value is None else format_quantity(value, unit)


def judge(guard: Guard, entities: Sequence[str], *, before: float | None, after: float | None,
          last_week: float | None, predicted: float | None = None) -> GuardReading:
    """Return the guard's reading and whether it stops the run (see the module)."""
    unit = guard.unit
    label = guard.label
    if before is None or after is None:
        missing = "before" if before is None else "after"
        return GuardReading(metric=guard.metric, label=label, unit=unit, entities=list(entities), before=before,
                            after=after, last_week=last_week, predicted=predicted, tripped=True,
                            verdict=f"{label}: no data {missing} the step; a step is not judged blind, so the run "
                                    "stops.")
    worse = tripped(guard, before, after)
    lower = guard.worse_when == "lower"
    usual = worse and last_week is not None and (after * guard.factor >= last_week if lower
                                                 else after <= guard.factor * last_week)
    stops = worse and not usual
    then = f"{_q(before, unit)} before, {_q(after, unit)} after"
    if stops and lower:
        verdict = (f"{label} got worse: {then}, below {1 / guard.factor:g} times its value before"
                   + (f"; the same hours last week: {_q(last_week, unit)}" if last_week is not None else "") + ".")
    elif stops:
        verdict = (f"{label} got worse: {then}, above {guard.factor:g} times its value before and above "
                   f"{_q(guard.floor, unit)}" + (f"; the same hours last week: {_q(last_week, unit)}"
                                                  if last_week is not None else "") + ".")
    elif usual:
        verdict = (f"{label} {'fell' if lower else 'rose'} ({then}) but no more than in the same hours last week "
                   f"({_q(last_week, unit)}): held.")
    elif (after > before) if lower else (after < before):
        verdict = f"{label} improved: {then}."
    else:
        verdict = f"{label} held: {then}."
    if predicted is not None and not stops:
        verdict += f" Predicted: {_q(predicted, unit)}."
    return GuardReading(metric=guard.metric, label=label, unit=unit, entities=list(entities), before=before,
                        after=after, last_week=last_week, predicted=predicted, tripped=stops, verdict=verdict)


WATCH_GRACE = dt.timedelta(minutes=WATCH_GRACE_MINUTES)
WatchState = Literal["watching", "awaiting_data", "over"]


def awaiting_data(windows: Sequence[tuple[str, Sequence[float] | None, Sequence[float]]]) -> list[str]:
    """Return the guards (label, values before the step, values after it so far) that have points before the step
    and none after it yet: only their late points can still change the verdict (a guard without points before the
    step, or not readable in a run (None), is judged as it is)."""
    return [label for label, before, after in windows if before and not after]


def watch_state(now: dt.datetime, watch_until: dt.datetime, awaiting: Sequence[str]) -> WatchState:
    """Return whether a step's watch goes on ("watching": its set period is not over), waits for late guard data
    ("awaiting_data": the period is over but `awaiting` guards have no point after the step yet, within the grace)
    or is over (judge now; a guard still without data then trips: a step is never judged blind)."""
    if now < watch_until:
        return "watching"
    if awaiting and now < watch_until + WATCH_GRACE:
        return "awaiting_data"
    return "over"
