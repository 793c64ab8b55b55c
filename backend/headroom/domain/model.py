"""The shared vocabulary of the domain, one of each (pure: pydantic v2, frozen, JSON-ready; no shell imports)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# --- Entities and changes

EntityKind = Literal["volume", "instance", "node", "cluster"]
ChangeTarget = Literal["tikv", "aws"]
ChangeValue = str | int | float | bool | list[Any] | dict[str, Any]


class EntityRef(BaseModel):
    """What a finding or a change is about; the optional fields give its context (node, instance, volume).

    A TiKV node is named by its snapshot id (`node`, e.g. the TiUP instance name or the store address) and,
    once known, its status address (what SET CONFIG and the patcher address it by).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: EntityKind
    id: str
    node: str | None = Field(default=None, description="TiKV node id, when the entity belongs to one.")
    instance_id: str | None = None
    volume_id: str | None = None
    status_address: str | None = Field(default=None, description="TiKV status address (SET CONFIG).")

    def label(self) -> str:
        """Return `kind id`, e.g. `volume vol-0abc`."""
        return f"{self.kind} {self.id}"

    def tikv_node(self) -> str | None:
        """Return the TiKV node this entity pins down (status address, else node id), or None for every node."""
        return self.status_address or self.node or (self.id if self.kind == "node" else None)

    def volume(self) -> str | None:
        """Return the EBS volume id this entity names, if any."""
        return self.volume_id or (self.id if self.kind == "volume" else None)

    def instance(self) -> str | None:
        """Return the EC2 instance id this entity names, if any."""
        return self.instance_id or (self.id if self.kind == "instance" else None)


class Change(BaseModel):
    """One proposed change: a tikv.toml key as TiKV spells it, or an AWS action.attribute, on one entity.

    For `target="tikv"`, `key` is the dotted tikv.toml key and `proposed` the value as written in tikv.toml
    (e.g. "4GiB"); the change applies to `entity.tikv_node()`, or to every TiKV when that is None. For
    `target="aws"`, `key` names the action and attribute (`volume.type`, `volume.iops`, `volume.throughput`,
    `volume.size`, `volume.create`, `volume.raid0-stripes`, `instance.type`) and `entity` the volume or instance.
    `entity` None means "the entity of the finding it belongs to" until the finding fills it in.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    target: ChangeTarget
    key: str
    entity: EntityRef | None = None
    current: ChangeValue | None = None
    proposed: ChangeValue | None
    online: bool | None = Field(
        default=None, description="Applies without a restart (SET CONFIG, modify-volume); None: not stated."
    )
    reason: str = ""

    def applies_to(self) -> str | None:
        """Return what the change is applied to: its TiKV node (None: every node), else its volume or instance."""
        if self.entity is None:
            return None
        if self.target == "tikv":
            return self.entity.tikv_node()
        return self.entity.volume() or self.entity.instance()
