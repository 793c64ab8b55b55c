"""Did the advisor's prediction hold? The outcome of one applied fix (pure).

A finding's stored impact predicts how the use of one IOPS or throughput ceiling moves once its fix is applied:
the same load under a higher ceiling (or a cheaper, lower one), or fewer I/Os for the same bytes. The change
ledger measures the peak use of each ceiling after the change against the same hours of the week one week
earlier. `decide_outcome` compares the two as relative changes at the same load:

- held: the measured change reached the predicted one within HELD_TOLERANCE (a fix that should lower the use
  and lowered it further also held: the room promised is there);
- partly: the right direction, short of the tolerance;
- missed: no change (under NO_CHANGE), the wrong direction, or a use that rose further than a cut predicted;
- too early: less than MIN_MEASURED of data after the change (with when it becomes measurable);
- not measurable: the prediction names no ceiling use, or a window has no data.

The numbers are Headroom's own choice, explained on "How Headroom decides: Fix outcomes: when a prediction held"
(docs/thresholds/fix-outcomes.md).
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from headroom.domain.model import Impact
from headroom.domain.units import format_duration_words, format_quantity

Verdict = Literal["held", "partly", "missed", "too_early", "not_measurable"]
MEASURED_VERDICTS: tuple[Verdict, ...] = ("held", "partly", "missed")

HELD_TOLERANCE = 0.25  # held: the measured change is at least 75 % of the predicted change (fix-outcomes.md)
NO_CHANGE = 0.05  # a relative move under 5 % of the use before is no change (fix-outcomes.md)
MIN_MEASURED = dt.timedelta(days=1)  # a whole daily cycle after the change (fix-outcomes.md)
FULL_WINDOW = dt.timedelta(days=7)  # the ledger's after window: once covered, the outcome is final

Dimension = Literal["iops", "throughput"]
Scope = Literal["volume", "instance"]

# The Impact.metric each rule writes when its prediction is the use of a ceiling, and how to read it:
# "ceiling": before/after are the ceiling (use at the same load scales by before / after);
# "use": before/after are the use itself (after / before);
# "room": only the headroom percentages say how the use moves (the metric is another quantity, e.g. cost).
_CEILING_METRICS: dict[str, tuple[Dimension, Scope | None, Literal["ceiling", "use", "room"]]] = {
    "sustained IOPS ceiling": ("iops", None, "ceiling"),
    "sustained throughput ceiling": ("throughput", None, "ceiling"),
    "instance sustained EBS throughput": ("throughput", "instance", "ceiling"),
    "IOPS utilisation p95": ("iops", None, "use"),
    "MiB/s utilisation p95": ("throughput", None, "use"),
    "monthly cost": ("iops", None, "room"),
}


class PredictedUse(BaseModel):
    """What a fix was predicted to do to the use of one ceiling: the use after over the use before, same load."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dimension: Dimension
    scope: Scope | None = Field(description="instance: the instance's EBS limit; None: the finding's own entity.")
    ratio: float = Field(description="Use after / use before at the same load (0.5: the use halves).")
    words: str = Field(description='What the advisor predicted, e.g. "IOPS ceiling 3,000 IOPS -> 6,000 IOPS".')


class FixOutcome(BaseModel):
    """Whether one applied fix did what its finding predicted, with both numbers as a person reads them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verdict: Verdict
    summary: str = Field(description="The outcome in one sentence, with predicted and measured numbers.")
    measure: str | None = Field(description='What was compared, e.g. "peak use of the data volume\'s IOPS ceiling".')
    predicted_before_percent: float | None = Field(description="The use before (the measured one: same load).")
    predicted_after_percent: float | None = Field(description="The use the prediction expected after.")
    measured_before_percent: float | None
    measured_after_percent: float | None
    achieved: float | None = Field(description="The measured change over the predicted change (1: as predicted).")
    measurable_at: dt.datetime | None = Field(description="Too early: when a whole day after the change is in.")
    final: bool = Field(description="The after window is complete: the outcome no longer changes.")


def predicted_use(impact: Impact | None) -> tuple[PredictedUse | None, str | None]:
    """Read the ceiling use a finding's impact predicts, or None with the reason it predicts none."""
    if impact is None or not impact.summary:
        return None, "the finding stored no prediction"
    known = _CEILING_METRICS.get(impact.metric or "")
    if known is None:
        what = impact.metric or "its own words"
        return None, f"the prediction is about {what}, not the use of an IOPS or throughput ceiling"
    dimension, scope, kind = known
    unit = "IOPS" if dimension == "iops" else "MiB/s"
    hb, ha = impact.headroom_before_pct, impact.headroom_after_pct
    ratio: float | None = None
    words = ""
    if hb is not None and ha is not None and hb < 100:
        ratio = (100.0 - ha) / (100.0 - hb)
        words = f"room above the peak {format_quantity(hb, '%')} -> {format_quantity(ha, '%')}"
    if kind == "ceiling" and impact.before and impact.after:
        ratio = impact.before / impact.after
        words = (f"{'instance EBS' if scope == 'instance' else dimension_words(dimension)} ceiling "
                 f"{format_quantity(impact.before, unit)} -> {format_quantity(impact.after, unit)}")
    elif kind == "use" and impact.before and impact.after is not None:
        ratio = impact.after / impact.before
        words = f"use of the {unit} ceiling {format_quantity(100 * impact.before, '%')} -> " \
                f"{format_quantity(100 * impact.after, '%')}"
    if ratio is None or ratio < 0:
        return None, "the prediction has no number after the fix"
    return PredictedUse(dimension=dimension, scope=scope, ratio=ratio, words=words), None


def dimension_words(dimension: Dimension) -> str:
    """Name a ceiling's dimension as the ledger does: IOPS, or throughput."""
    return "IOPS" if dimension == "iops" else "throughput"


def decide_outcome(prediction: PredictedUse | None, no_prediction: str | None, *, measure: str | None,
                   measured_before: float | None, measured_after: float | None, after_start: dt.datetime,
                   after_end: dt.datetime) -> FixOutcome:
    """Judge one applied fix: its predicted ceiling use against the peak use measured before and after (percent
    of the ceiling in force then), the after window running from `after_start` to `after_end`."""
    span = after_end - after_start
    final = span >= FULL_WINDOW

    def out(verdict: Verdict, summary: str, expected: float | None = None, achieved: float | None = None,
            measurable_at: dt.datetime | None = None) -> FixOutcome:
        return FixOutcome(
            verdict=verdict, summary=summary, measure=measure,
            predicted_before_percent=_r(measured_before) if expected is not None else None,
            predicted_after_percent=_r(expected), measured_before_percent=_r(measured_before),
            measured_after_percent=_r(measured_after), achieved=None if achieved is None else round(achieved, 2),
            measurable_at=measurable_at, final=final or verdict == "not_measurable" and prediction is None)

    if prediction is None:
        return out("not_measurable", f"Not measurable: {no_prediction or 'the finding stored no prediction'}.")
    if span < MIN_MEASURED:
        at = after_start + MIN_MEASURED
        wait = format_duration_words((at - after_end).total_seconds())
        return out("too_early", f"Too early: measurable in {wait}, once a whole day after the change is in.",
                   measurable_at=at)
    if measure is None:
        return out("not_measurable", "Not measurable: Headroom measures no ceiling of the store this fix touched.")
    if measured_before is None or measured_after is None or measured_before <= 0:
        missing = "after the change" if measured_before and measured_before > 0 else "in the week before"
        return out("not_measurable", f"Not measurable: no {measure} {missing}.")
    expected = measured_before * prediction.ratio
    predicted_change = prediction.ratio - 1.0
    said = (f"predicted {format_quantity(measured_before, '%')} -> {format_quantity(expected, '%')} "
            f"({prediction.words}), measured {format_quantity(measured_before, '%')} -> "
            f"{format_quantity(measured_after, '%')}")
    if abs(predicted_change) < NO_CHANGE:
        return out("not_measurable", f"Not measurable: the predicted move is smaller than the week-to-week noise; "
                                     f"{said}.", expected)
    measured_change = measured_after / measured_before - 1.0
    achieved = measured_change / predicted_change
    if abs(measured_change) < NO_CHANGE:
        return out("missed", f"Missed: no change in the {measure}; {said}.", expected, achieved)
    if achieved < 0:
        return out("missed", f"Missed: the {measure} moved the wrong way; {said}.", expected, achieved)
    if predicted_change > 0 and achieved > 1 + HELD_TOLERANCE:
        return out("missed", f"Missed: the {measure} rose further than predicted, less room than promised; {said}.",
                   expected, achieved)
    if achieved >= 1 - HELD_TOLERANCE:
        return out("held", f"Held: {said}.", expected, achieved)
    return out("partly", f"Partly: the right direction, {format_quantity(round(100 * achieved), '%')} of the predicted "
                         f"move; {said}.", expected, achieved)


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def accuracy_statement(held: int, partly: int, missed: int, too_early: int, not_measurable: int, days: int) -> str:
    """Say in words how often a rule's predictions held over the last `days` days."""
    measured = held + partly + missed
    window = f"in the last {days} days"
    if measured == 0:
        pending = too_early + not_measurable
        if pending == 0:
            return f"No fix of this rule applied yet {window}."
        parts = [f"{too_early} too early to tell" if too_early else "",
                 f"{not_measurable} not measurable" if not_measurable else ""]
        return (f"No applied fix of this rule measured yet {window} "
                f"({', '.join(p for p in parts if p)}).")
    fixes = "fix" if measured == 1 else "fixes"
    line = f"The prediction held for {held} of {measured} applied {fixes} measured {window}"
    rest = [f"{partly} partly" if partly else "", f"{missed} missed" if missed else ""]
    if any(rest):
        line += f" ({', '.join(r for r in rest if r)})"
    if too_early:
        line += f"; {too_early} more too early to tell"
    return line + "."
