"""The finding model: what a rule says about one entity, as plain data (pydantic v2, frozen, JSON-ready).

A `Finding` carries:
- `rule` (stable id), `severity` (critical / warning / info), `entity` (volume, instance, node or cluster),
  a one-line `title`;
- `evidence` (`headroom.domain.model.Evidence`): the observed numbers next to the limit they are compared to,
  the window, how often and how long the condition held, corroborating signals, typed forecasts and the series
  to chart;
- `why`: the mechanism, with its source;
- `changes`: the recommended changes as data (`headroom.domain.model.Change`, the record the store keeps and
  the patcher renders as it is; a change without its own entity takes the finding's, and one that does not
  say whether it applies online gets TiKV's online table's answer, or for AWS: modify-volume yes, a new
  instance type no); `options`: ranked alternatives (each with its own changes and impact), `changes` being
  the first one's;
- `impact` (`headroom.domain.model.Impact`): headroom gained and monthly cost delta; `confidence` in [0, 1];
- `dedup_key`: `<rule>/<cluster id, else name>/<entity kind>:<entity id>[/<aspect>]`: stable across days and
  cluster renames, so the same condition seen tomorrow updates the stored finding instead of adding one.

API (stable; other rule families build on it):
    Severity (and its order), EntityRef, Change, Measure, ReferenceLine, SeriesRef, Forecast, Evidence, Impact:
        headroom.domain.model
    Option(label, changes, impact, notes=[])
    Finding(rule, severity, entity, title, evidence, why, changes=[], options=[], impact, confidence,
            dedup_key, sources=[], notes=[], group=None)
        group: set by the grouping pass (advisor/groups.py) after the rules, never by a rule
        .to_dict() -> JSON-ready dict
    make_dedup_key(rule, cluster, entity, aspect=None) -> str
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from headroom.domain.model import Change, EntityRef, Evidence, FindingGroup, Impact, Option, Severity
from headroom.domain.tikvconf.online import can_change_online


class _Model(BaseModel):
    # Fields with a default are always present in the JSON: the generated client types them as required.
    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_serialization_defaults_required=True)


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
    group: FindingGroup | None = Field(
        default=None, description="The findings that share this one's cause (advisor/groups.py); null: none."
    )

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
