"""When a credit bucket's forecast is a finding, and how severe (shared by gp2 and instance EBS burst rules).

Not a rules module (it exposes no RULES). The forecast itself is `headroom.domain.forecast.burst`; this module
only judges it. Thresholds are Headroom's own choice, explained in docs/thresholds/burst.md:

- FORECAST_HORIZON_SECONDS = 24 h: a bucket forecast to empty within the next day (so within the next daily
  peak) is a finding before it is nearly empty; later than that, the next snapshot sees it again.
- A forecast only counts when its demand is evidence, not an extrapolation: the projection followed
  yesterday's demand at the same time (`BurstForecast.from_daily_profile`, it contains the next peak), or the
  bucket is draining now (the recent window's median demand is above the bucket's baseline, so even that
  constant demand empties it). A rising line extrapolated for hours from a quiet bucket is not a finding.
- Severity by time to empty: critical within 2 h, warning within 8 h, info within 24 h.
"""

from __future__ import annotations

import math

from dataclasses import dataclass, field

from headroom.domain.forecast.burst import BurstForecast
from headroom.domain.references import decides_page
from headroom.domain.model import Measure, Severity, severity_rank
from headroom.domain.words import duration_text as duration_text
from headroom.domain.units import format_duration_words, format_quantity

THRESHOLDS_DOC = decides_page("burst.md")
FORECAST_HORIZON_SECONDS = 24 * 3600.0  # Headroom choice: the next day's peak (docs/thresholds/burst.md)
# Headroom choice (docs/thresholds/burst.md): 2 h is less than an on-call engineer needs to see a finding,
# decide and apply a ModifyVolume / instance resize; 8 h is a working day's notice.
CRITICAL_WITHIN_SECONDS = 2 * 3600.0
WARNING_WITHIN_SECONDS = 8 * 3600.0


def forecast_seconds_to_empty(fc: BurstForecast) -> float | None:
    """Return the seconds until the bucket empties when the forecast is a finding on its own, else None."""
    if not fc.bursts or fc.seconds_to_empty is None or fc.seconds_to_empty > FORECAST_HORIZON_SECONDS:
        return None
    if fc.seconds_to_empty == 0.0:
        return 0.0  # empty now: a fact, not a projection
    if fc.from_daily_profile or fc.demand_low > fc.baseline:
        return fc.seconds_to_empty
    return None


def severity_for_time_to_empty(seconds: float) -> Severity:
    """Return the severity of a bucket forecast to empty in `seconds` (docs/thresholds/burst.md)."""
    if seconds <= CRITICAL_WITHIN_SECONDS:
        return "critical"
    if seconds <= WARNING_WITHIN_SECONDS:
        return "warning"
    return "info"


def more_severe(a: Severity, b: Severity) -> Severity:
    """Return the more severe of two severities."""
    return a if severity_rank(a) <= severity_rank(b) else b


def band_text(fc: BurstForecast) -> str:
    """Write the forecast's band: earliest (high demand) to latest (low demand) time to empty, UTC, with the date (the moment can be up to a day away)."""
    earliest = f"{fc.empties_at_earliest:%Y-%m-%d %H:%M}" if fc.empties_at_earliest else "?"
    latest = f"{fc.empties_at_latest:%Y-%m-%d %H:%M} UTC" if fc.empties_at_latest else "not within a day at low demand"
    return f"{earliest} to {latest}"


def forecast_text(fc: BurstForecast, soon: float | None) -> str:
    """Write "forecast to empty in 1 h 48 min (at 2026-01-05 14:32 UTC) at 2,000 IOPS, then its 1,500 IOPS baseline"."""
    if soon is None or soon <= 0.0 or fc.empties_at is None:
        return ""
    demand = (
        "following yesterday's demand at the same time"
        if fc.from_daily_profile
        else f"at {format_quantity(fc.demand, fc.unit)}"
    )
    return (
        f"forecast to empty in {duration_text(soon)} (at {fc.empties_at:%Y-%m-%d %H:%M} UTC) {demand}, then its "
        f"{format_quantity(fc.baseline, fc.unit)} baseline"
    )


def title_forecast(fc: BurstForecast, soon: float | None) -> str:
    """The forecast as a finding's title says it: to the hour, no clock time (a title is shown for days, in lists,
    alerts and the weekly email; the exact time is in the evidence's forecast and the why)."""
    if soon is None or soon <= 0.0 or fc.empties_at is None:
        return ""
    hours = math.ceil(soon / 3600.0)
    within = "within the hour" if hours <= 1 else f"within {hours} h"
    demand = "at yesterday's demand" if fc.from_daily_profile else f"at {format_quantity(fc.demand, fc.unit)}"
    return f"forecast to empty {within} {demand}, then its {format_quantity(fc.baseline, fc.unit)} baseline"


@dataclass(frozen=True)
class Outlook:
    """What a burst finding adds when its forecast counts: severity, title, measure, reason, sources."""

    severity: Severity
    title_suffix: str = ""
    measures: list[Measure] = field(default_factory=list)
    why: str = ""
    sources: list[str] = field(default_factory=list)
    confidence: float = 0.7

    def condition(self, metric: str) -> str:
        """Return the evidence condition of a finding fired by the forecast alone."""
        return f"{metric} forecast to reach 0% within {format_duration_words(FORECAST_HORIZON_SECONDS)} at the demand it draws now"


def burst_outlook(
    fc: BurstForecast, soon: float | None, seen_low: bool, observed_severity: Severity
) -> Outlook:
    """Combine what was seen (balance <= 10%, time at 0%) with the forecast (`soon`, None: not a finding)."""
    if soon is None:
        return Outlook(severity=observed_severity)
    severity = severity_for_time_to_empty(soon)
    if seen_low:
        severity = more_severe(severity, observed_severity)
    text = forecast_text(fc, soon)
    measures = []
    if not seen_low:
        measures.append(
            Measure(
                label="forecast time to empty",
                value=round(soon / 60.0, 1),
                unit="min",
                limit=FORECAST_HORIZON_SECONDS / 60.0,
                limit_label="finding horizon: the next day (Headroom choice)",
                statistic="forecast",
                source=THRESHOLDS_DOC,
            )
        )
    why = (
        f" The balance has not run low yet ({format_quantity(fc.balance_percent, '%')} now), but it is {text} (band "
        f"{band_text(fc)}); a bucket forecast to empty within a day is a finding before it is nearly empty "
        f"({THRESHOLDS_DOC})."
        if text and not seen_low
        else ""
    )
    return Outlook(
        severity=severity,
        title_suffix=f"; {title_forecast(fc, soon)}" if text else "",
        measures=measures,
        why=why,
        sources=[THRESHOLDS_DOC],
        # Headroom choice: a forecast the observed balance slope agrees with is surer than one alone
        confidence=0.7 if fc.slope_agrees else 0.6,
    )
