"""Headroom's shared vocabulary, one definition of each (pure: pydantic v2, frozen, JSON-ready).

The advisor builds these, the store keeps them as JSON, the API returns them as they are (so the generated
TypeScript client carries their types) and the weekly email reads their fields. Nothing here imports the shell.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

# --- Findings

Severity = Literal["critical", "warning", "info"]
# The one order of severities, most severe first: lists, sorts, counts and the API's severity_rank read it.
SEVERITIES: tuple[Severity, ...] = get_args(Severity)
# 1 = most severe (the API's `severity_rank`); every sort orders by it.
SEVERITY_RANK: Mapping[str, int] = {severity: rank for rank, severity in enumerate(SEVERITIES, 1)}


def severity_rank(severity: str) -> int:
    """Return 1 for critical, 2 for warning, 3 for info, and after them anything unknown."""
    return SEVERITY_RANK.get(severity, len(SEVERITIES) + 1)


class _FindingPart(BaseModel):
    # Fields with a default are always present in the JSON: the generated client types them as required.
    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_serialization_defaults_required=True)


class Measure(_FindingPart):
    """One observed number and, when it is compared to one, the limit (same unit)."""

    label: str
    value: float
    unit: str
    limit: float | None = None
    limit_label: str | None = None
    statistic: str | None = Field(default=None, description='How it was taken: "p95", "max", "share", ...')
    source: str | None = Field(default=None, description="Where the limit comes from (domain.md section).")

    @property
    def ratio(self) -> float | None:
        """Return value / limit, or None without a positive limit."""
        return self.value / self.limit if self.limit else None


class ReferenceLine(_FindingPart):
    """A horizontal line on a chart: a ceiling, a threshold."""

    value: float
    label: str
    unit: str


class SeriesRef(_FindingPart):
    """A series to chart: a registry metric of the snapshot, or a derived view (`derived.*`, domain/advisor/context.py)."""

    entity_kind: Literal["volume", "instance", "node"]
    entity_id: str
    metric: str
    labels: dict[str, str] = Field(default_factory=dict)
    label: str | None = None
    reference_lines: list[ReferenceLine] = Field(default_factory=list)


ForecastKind = Literal["burst_empty", "refill", "ceiling"]


class Forecast(_FindingPart):
    """A projection a rule made: when a credit bucket empties, how long it takes to refill, when growth reaches
    a ceiling. Times are UTC; `within_seconds` counts from the evidence's end (the advice run's `now`).

    - `burst_empty`: the bucket empties in `within_seconds` (0: it is empty now; None: not at this demand), at
      `at` (band `earliest` to `latest`, `latest` None: never at the band's low demand), then serves `value`
      `unit` (its baseline); `demand` is the demand assumed and `balance_pct` the balance now.
    - `refill`: from empty (or from now) back to full in `within_seconds` at the off-peak `demand`.
    - `ceiling`: `label` (e.g. "sustained IOPS ceiling", `value` `unit`) is reached in `within_seconds`.
    """

    kind: ForecastKind
    label: str | None = Field(default=None, description="What is projected, e.g. the balance metric.")
    within_seconds: float | None = Field(
        default=None, description="From the evidence's end; null: not at all."
    )
    at: datetime | None = None
    earliest: datetime | None = Field(default=None, description="The band's earliest time (high demand).")
    latest: datetime | None = Field(
        default=None, description="The band's latest time (low demand); null: never."
    )
    value: float | None = Field(
        default=None, description="burst_empty: the baseline served after; ceiling: it."
    )
    unit: str
    demand: float | None = Field(default=None, description="The demand the projection assumes, in `unit`.")
    balance_pct: float | None = Field(default=None, description="The credit balance now (%).")
    method: str = Field(description="How it was computed.")
    source: str | None = Field(default=None, description="The module or document it comes from.")


class Evidence(_FindingPart):
    """Observed numbers vs limits, the window, how often and how long the condition held, forecasts, what to chart."""

    window_start: datetime
    window_end: datetime
    step_seconds: int
    condition: str = Field(description='The condition tested, e.g. "counted IOPS >= 90% of 3,000 IOPS".')
    measures: list[Measure] = Field(default_factory=list)
    threshold_pct: float | None = None
    share_of_window: float | None = Field(default=None, description="Fraction (0-1) of points where it held.")
    longest_run_minutes: float | None = None
    episodes: int | None = Field(default=None, description="Separate runs of the condition in the window.")
    corroboration: list[str] = Field(default_factory=list)
    forecasts: list[Forecast] = Field(default_factory=list)
    series: list[SeriesRef] = Field(default_factory=list)


class Impact(_FindingPart):
    """What the recommended changes buy: headroom on the binding limit and the monthly cost delta (USD)."""

    summary: str
    metric: str | None = Field(default=None, description='The limit, e.g. "sustained IOPS ceiling".')
    unit: str | None = None
    before: float | None = None
    after: float | None = None
    headroom_before_pct: float | None = Field(default=None, description="100 × (1 − peak / limit) now.")
    headroom_after_pct: float | None = Field(default=None, description="The same after the change.")
    monthly_cost_before_usd: float | None = None
    monthly_cost_after_usd: float | None = None
    monthly_cost_delta_usd: float | None = None
