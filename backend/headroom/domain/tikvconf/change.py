"""The plain data the patcher works on: a Change (one key or AWS attribute) and a Patch (accepted changes).

The advisor emits findings whose `changes` are these; tikvconf never imports the advisor. A Change names the
finding
it came from only by reference (rule + dedup key), so a Patch can say why each line is there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Scalar = str | int | float | bool
Value = Scalar | list[Any] | dict[str, Any]
Target = Literal["tikv", "aws"]

DEFAULT_SERVER_PORT = 20160  # domain.md s4.2: the gRPC/server address default is 127.0.0.1:20160
DEFAULT_STATUS_PORT = 20180


class FindingRef(BaseModel):
    """Which finding a change came from: its rule, its dedup key, and a title for comments."""

    model_config = ConfigDict(frozen=True)

    rule: str
    dedup_key: str = ""
    title: str = ""

    def label(self) -> str:
        """Return a short label: the dedup key (it names the rule), else `rule (dedup key)`, else the rule."""
        if self.dedup_key and self.dedup_key.startswith(self.rule):
            return self.dedup_key
        return f"{self.rule} ({self.dedup_key})" if self.dedup_key else self.rule


class Entity(BaseModel):
    """What a change applies to: a TiKV `node` (status address; None = every TiKV), a volume, an instance."""

    model_config = ConfigDict(frozen=True)

    node: str | None = None
    store_address: str | None = None
    volume_id: str | None = None
    instance_id: str | None = None

    def host(self) -> str | None:
        """Return the node's host (IP or name) from its status or store address."""
        address = self.node or self.store_address
        return split_address(address)[0] if address else None


class Change(BaseModel):
    """One proposed change: a dotted tikv.toml key as TiKV spells it, or an AWS attribute (`volume.iops`)."""

    model_config = ConfigDict(frozen=True)

    target: Target
    key: str
    current: Value | None = None
    proposed: Value
    online: bool | None = None
    reason: str = ""
    finding: FindingRef | None = None
    entity: Entity = Field(default_factory=Entity)

    def inverse(self) -> Change:
        """Return the change that undoes this one (proposed and current swapped)."""
        if self.current is None:
            raise ValueError(f"cannot invert {self.key}: its current value is unknown")
        return self.model_copy(update={"current": self.proposed, "proposed": self.current})


class Node(BaseModel):
    """A TiKV instance: status address (SET CONFIG), server address (tikv-ctl) and EC2 instance."""

    model_config = ConfigDict(frozen=True)

    status_address: str
    address: str | None = None
    instance_id: str | None = None
    name: str | None = None
    store_id: int | None = None

    def host(self) -> str:
        """Return the host part of the status address."""
        return split_address(self.status_address)[0]

    def server_address(self) -> str:
        """Return the gRPC address tikv-ctl talks to (`<ip>:20160` when the snapshot did not give one)."""
        return self.address or f"{self.host()}:{DEFAULT_SERVER_PORT}"


class Patch(BaseModel):
    """Accepted changes for one cluster (one finding, several, or all), with the nodes they may address."""

    model_config = ConfigDict(frozen=True)

    cluster: str = "<cluster>"
    tikv_version: str | None = None
    nodes: tuple[Node, ...] = ()
    changes: tuple[Change, ...] = ()

    def tikv_changes(self) -> tuple[Change, ...]:
        """Return the tikv.toml changes, in order."""
        return tuple(change for change in self.changes if change.target == "tikv")

    def aws_changes(self) -> tuple[Change, ...]:
        """Return the AWS changes, in order."""
        return tuple(change for change in self.changes if change.target == "aws")

    def node(self, status_address: str) -> Node:
        """Return the node with this status address (a bare Node if the snapshot did not list it)."""
        for node in self.nodes:
            if node.status_address == status_address:
                return node
        return Node(status_address=status_address)


def resolve_nodes(changes: Iterable[Change], nodes: Sequence[Node]) -> tuple[Change, ...]:
    """Rewrite each change's `entity.node` (a node name, server or status address) as a status address."""
    aliases: dict[str, str] = {}
    for node in nodes:
        for alias in (node.name, node.address, node.status_address, node.instance_id):
            if alias:
                aliases.setdefault(alias, node.status_address)
    resolved: list[Change] = []
    for change in changes:
        entity = change.entity
        update: dict[str, Any] = {}
        if entity.node and entity.node in aliases:
            update["node"] = aliases[entity.node]
        elif entity.store_address and entity.store_address in aliases and change.target == "tikv":
            update["node"] = aliases[entity.store_address]
        elif change.target == "tikv" and not entity.node and entity.instance_id:
            on_instance = [node.status_address for node in nodes if node.instance_id == entity.instance_id]
            if len(on_instance) == 1:
                update["node"] = on_instance[0]
        resolved.append(
            change.model_copy(update={"entity": entity.model_copy(update=update)}) if update else change
        )
    return tuple(resolved)


def split_address(address: str) -> tuple[str, int | None]:
    """Split `host:port` (or `[v6]:port`) into host and port."""
    text = address.strip()
    if text.startswith("[") and "]" in text:
        host, _, rest = text[1:].partition("]")
        port = rest.lstrip(":")
        return host, int(port) if port.isdigit() else None
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        return text, None
    return host, int(port)


def _entity_from(raw: object, inherited: Entity | None = None) -> Entity:
    base = inherited.model_dump() if inherited else {}
    if isinstance(raw, str):
        if raw.startswith("vol-"):
            base["volume_id"] = raw
        elif raw.startswith("i-"):
            base["instance_id"] = raw
        elif ":" in raw:
            base["node"] = raw
    elif isinstance(raw, Mapping):
        aliases = {
            "node": ("node", "status_address", "status_addr", "status-address"),
            "store_address": ("store_address", "address", "addr"),
            "volume_id": ("volume_id", "volume", "VolumeId"),
            "instance_id": ("instance_id", "instance", "InstanceId"),
        }
        for field, names in aliases.items():
            for name in names:
                value = raw.get(name)
                if isinstance(value, str) and value:
                    base[field] = value
                    break
        kind, ident = raw.get("kind") or raw.get("type"), raw.get("id")
        if isinstance(ident, str) and ident:
            if kind in ("volume", "ebs_volume"):
                base["volume_id"] = ident
            elif kind in ("instance", "ec2_instance"):
                base["instance_id"] = ident
            elif kind in ("node", "tikv", "store"):
                base["node"] = ident
    return Entity(**base)


def changes_from_findings(
    findings: Iterable[Mapping[str, Any]], select: Sequence[str] = ()
) -> tuple[Change, ...]:
    """Collect the changes of findings (all, or those whose rule or dedup key is in `select`).

    A change's entity comes from its own `entity` (or node/volume_id/instance_id fields), else from the
    finding's.
    """
    wanted = set(select)
    collected: list[Change] = []
    for finding in findings:
        rule = str(finding.get("rule", ""))
        dedup_key = str(finding.get("dedup_key", "") or "")
        if wanted and rule not in wanted and dedup_key not in wanted:
            continue
        reference = FindingRef(rule=rule, dedup_key=dedup_key, title=str(finding.get("title", "") or ""))
        finding_entity = _entity_from(finding.get("entity"))
        for raw in finding.get("changes", ()) or ():
            entity = _entity_from(raw.get("entity"), finding_entity)
            entity = _entity_from({k: v for k, v in raw.items() if k != "entity"}, entity)
            collected.append(
                Change(
                    target=raw["target"],
                    key=raw["key"],
                    current=raw.get("current"),
                    proposed=raw["proposed"],
                    online=raw.get("online"),
                    reason=str(raw.get("reason", "") or ""),
                    finding=reference,
                    entity=entity,
                )
            )
    return tuple(collected)
