"""The finding model: what a rule says about one entity, as plain data (pydantic v2, frozen, JSON-ready).

A `Finding` carries:
- `rule` (stable id), `severity` (critical / warning / info), `entity` (volume, instance, node or cluster),
  a one-line `title`;
- `evidence` (`headroom.domain.model.Evidence`): the observed numbers next to the limit they are compared to,
  the window, how often and how long the condition held, corroborating signals, typed forecasts and the series
  to chart;
- `why`: the mechanism, with its source;
- `changes`: the recommended changes as data (`ProposedChange`, convertible to `headroom.domain.tikvconf.Change`);
  `options`: ranked alternatives (each with its own changes and impact), `changes` being the first one's;
- `impact` (`headroom.domain.model.Impact`): headroom gained and monthly cost delta; `confidence` in [0, 1];
- `dedup_key`: `<rule>/<cluster id, else name>/<entity kind>:<entity id>[/<aspect>]`: stable across days and
  cluster renames, so the same condition seen tomorrow updates the stored finding instead of adding one.

Severity, Measure, ReferenceLine, SeriesRef, Forecast, Evidence and Impact are `headroom.domain.model`'s.

API (stable; other rule families build on it):
    EntityKind
    EntityRef(kind, id, node=None, instance_id=None, volume_id=None, status_address=None)
    ProposedChange(target, key, proposed, current=None, online=None, reason="", entity=None)
        .to_change(finding: Finding | None = None) -> headroom.domain.tikvconf.Change
    Option(label, changes, impact, notes=[])
    Finding(rule, severity, entity, title, evidence, why, changes=[], options=[], impact, confidence,
            dedup_key, sources=[], notes=[])
        .to_dict() -> JSON-ready dict;  .tikvconf_changes() -> tuple[Change, ...]
    make_dedup_key(rule, cluster, entity, aspect=None) -> str
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from headroom.domain.model import Evidence, Impact, Severity
from headroom.domain.tikvconf.change import Change, FindingRef
from headroom.domain.tikvconf.change import Entity as ChangeEntity

EntityKind = Literal["volume", "instance", "node", "cluster"]
Target = Literal["tikv", "aws"]

ChangeValue = str | int | float | bool | list[Any] | dict[str, Any]


class _Model(BaseModel):
    # Fields with a default are always present in the JSON: the generated client types them as required.
    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_serialization_defaults_required=True)


class EntityRef(_Model):
    """What a finding (or a change) is about; the optional fields give its context (node, instance)."""

    kind: EntityKind
    id: str
    node: str | None = Field(default=None, description="TiKV node id, when the entity belongs to one.")
    instance_id: str | None = None
    volume_id: str | None = None
    status_address: str | None = Field(default=None, description="TiKV status address (SET CONFIG).")

    def label(self) -> str:
        """Return `kind id`, e.g. `volume vol-0abc`."""
        return f"{self.kind} {self.id}"


class ProposedChange(_Model):
    """One recommended change as data: a tikv.toml key (as TiKV spells it) or an AWS action.attribute.

    For `target="tikv"`, `key` is the dotted tikv.toml key and `proposed` the value as written in tikv.toml
    (e.g. "4GiB"). For `target="aws"`, `key` names the action and attribute (`volume.type`, `volume.iops`,
    `volume.throughput`, `volume.size`, `volume.raid0-stripes`, `instance.type`) and `entity` the volume or
    instance it applies to.
    """

    target: Target
    key: str
    proposed: ChangeValue
    current: ChangeValue | None = None
    online: bool | None = None
    reason: str = ""
    entity: EntityRef | None = None

    def to_change(self, finding: Finding | None = None) -> Change:
        """Convert to the patcher's `headroom.domain.tikvconf.Change` (with a reference to the finding)."""
        ent = self.entity or (finding.entity if finding is not None else None)
        change_entity = ChangeEntity()
        if ent is not None:
            node = ent.status_address or ent.node or (ent.id if ent.kind == "node" else None)
            change_entity = ChangeEntity(
                node=node if self.target == "tikv" else None,
                volume_id=ent.volume_id or (ent.id if ent.kind == "volume" else None),
                instance_id=ent.instance_id or (ent.id if ent.kind == "instance" else None),
            )
        ref = (
            FindingRef(rule=finding.rule, dedup_key=finding.dedup_key, title=finding.title)
            if finding is not None
            else None
        )
        return Change(
            target=self.target,
            key=self.key,
            current=self.current,
            proposed=self.proposed,
            online=self.online,
            reason=self.reason,
            finding=ref,
            entity=change_entity,
        )


class Option(_Model):
    """One way to fix a finding (e.g. "gp3 at 6,000 IOPS"), with its changes and impact."""

    label: str
    changes: list[ProposedChange]
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
    changes: list[ProposedChange] = Field(default_factory=list)
    options: list[Option] = Field(default_factory=list)
    impact: Impact
    confidence: float = Field(ge=0.0, le=1.0)
    dedup_key: str
    sources: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (datetimes as ISO 8601 strings)."""
        return self.model_dump(mode="json")

    def tikvconf_changes(self) -> tuple[Change, ...]:
        """Return this finding's changes as the patcher's Change records."""
        return tuple(change.to_change(self) for change in self.changes)


def make_dedup_key(rule: str, cluster: str, entity: EntityRef, aspect: str | None = None) -> str:
    """Return the stable key of a condition: same rule, cluster, entity (and aspect) -> same key."""
    key = f"{rule}/{cluster}/{entity.kind}:{entity.id}"
    return f"{key}/{aspect}" if aspect else key
