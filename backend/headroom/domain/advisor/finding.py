"""The finding model: what a rule says about one entity, as plain data (pydantic v2, frozen, JSON-ready).

A `Finding` carries:
- `rule` (stable id), `severity` (critical / warning / info), `entity` (volume, instance, node or cluster),
  a one-line `title`;
- `evidence`: the observed numbers next to the limit they are compared to (`Measure`), the window, how often
  and how long the condition held, corroborating signals, and the series to chart (`SeriesRef`);
- `why`: the mechanism, with its source;
- `changes`: the recommended changes as data (`headroom.domain.model.Change`, the record the store keeps and
  the patcher renders as it is; a change without its own entity takes the finding's, and one that does not
  say whether it applies online gets TiKV's online table's answer, or for AWS: modify-volume yes, a new
  instance type no); `options`: ranked alternatives (each with its own changes and impact), `changes` being
  the first one's;
- `impact`: headroom gained and monthly cost delta; `confidence` in [0, 1];
- `dedup_key`: `<rule>/<cluster id, else name>/<entity kind>:<entity id>[/<aspect>]`: stable across days and
  cluster renames, so the same condition seen tomorrow updates the stored finding instead of adding one.

API (stable; other rule families build on it):
    Severity, SEVERITY_RANK
    EntityRef, Change: headroom.domain.model
    Measure(label, value, unit, limit=None, limit_label=None, statistic=None, source=None)
    SeriesRef(entity_kind, entity_id, metric, labels={}, label=None, reference_lines=[])
    ReferenceLine(value, label, unit)
    Evidence(window_start, window_end, step_seconds, condition, measures, threshold_pct=None,
             share_of_window=None, longest_run_minutes=None, episodes=None, corroboration=[], series=[])
    Impact(summary, metric=None, unit=None, before=None, after=None, headroom_before_pct=None,
           headroom_after_pct=None, monthly_cost_before_usd=None, monthly_cost_after_usd=None,
           monthly_cost_delta_usd=None)
    Option(label, changes, impact, notes=[])
    Finding(rule, severity, entity, title, evidence, why, changes=[], options=[], impact, confidence,
            dedup_key, sources=[], notes=[])
        .to_dict() -> JSON-ready dict
    make_dedup_key(rule, cluster, entity, aspect=None) -> str
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from headroom.domain.model import Change, EntityRef
from headroom.domain.tikvconf.online import can_change_online

Severity = Literal["critical", "warning", "info"]

# Lower sorts first.
SEVERITY_RANK: dict[str, int] = {"critical": 0, "warning": 1, "info": 2}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Measure(_Model):
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


class ReferenceLine(_Model):
    """A horizontal line on a chart: a ceiling, a threshold."""

    value: float
    label: str
    unit: str


class SeriesRef(_Model):
    """A series to chart: a registry metric of the snapshot, or a derived view (`derived.*`, see context)."""

    entity_kind: Literal["volume", "instance", "node"]
    entity_id: str
    metric: str
    labels: dict[str, str] = Field(default_factory=dict)
    label: str | None = None
    reference_lines: list[ReferenceLine] = Field(default_factory=list)


class Evidence(_Model):
    """Observed numbers vs limits, the window, how often and how long the condition held, what to chart."""

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
    series: list[SeriesRef] = Field(default_factory=list)


class Impact(_Model):
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


class Option(_Model):
    """One way to fix a finding (e.g. "gp3 at 6,000 IOPS"), with its changes and impact."""

    label: str
    changes: list[Change]
    impact: Impact
    notes: list[str] = Field(default_factory=list)


class Finding(_Model):
    """What one rule concluded about one entity."""

    rule: str
    severity: Severity
    entity: EntityRef
    title: str
    evidence: Evidence
    why: str
    changes: list[Change] = Field(default_factory=list)
    options: list[Option] = Field(default_factory=list)
    impact: Impact
    confidence: float = Field(ge=0.0, le=1.0)
    dedup_key: str
    sources: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _changes_are_complete(cls, data: Any) -> Any:
        """Give every change (its own and its options') the finding's entity and its online answer when unsaid."""
        if not isinstance(data, dict) or data.get("entity") is None:
            return data
        try:
            entity = EntityRef.model_validate(data["entity"])
            completed = dict(data)
            if data.get("changes"):
                completed["changes"] = [complete_change(c, entity) for c in data["changes"]]
            if data.get("options"):
                completed["options"] = [_complete_option(o, entity) for o in data["options"]]
        except (ValidationError, TypeError):
            return data  # the field validation that follows reports what is wrong
        return completed

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (datetimes as ISO 8601 strings)."""
        return self.model_dump(mode="json")


def complete_change(raw: Change | dict[str, Any], entity: EntityRef) -> Change:
    """Return the change with `entity` when it names none, and whether it applies online when it does not say."""
    change = Change.model_validate(raw)
    update: dict[str, Any] = {}
    if change.entity is None:
        update["entity"] = entity
    if change.online is None:
        # AWS: modify-volume is online; an instance type change needs a stop and start.
        online = (
            can_change_online(change.key, change.current, change.proposed)
            if change.target == "tikv"
            else change.key.startswith("volume.")
        )
        update["online"] = online
    return change.model_copy(update=update) if update else change


def _complete_option(raw: Any, entity: EntityRef) -> Any:
    if isinstance(raw, Option):
        return raw.model_copy(update={"changes": [complete_change(c, entity) for c in raw.changes]})
    if isinstance(raw, dict) and raw.get("changes"):
        return {**raw, "changes": [complete_change(c, entity) for c in raw["changes"]]}
    return raw


def make_dedup_key(rule: str, cluster: str, entity: EntityRef, aspect: str | None = None) -> str:
    """Return the stable key of a condition: same rule, cluster, entity (and aspect) -> same key."""
    key = f"{rule}/{cluster}/{entity.kind}:{entity.id}"
    return f"{key}/{aspect}" if aspect else key
