"""What the patcher works on: the domain's Change records (one key or AWS attribute each), the TiKV nodes they
may address, and a Patch (accepted changes for one cluster).

A Change is `headroom.domain.model.Change`, the one the advisor's rules build and the store keeps with its
finding; tikvconf never imports the advisor. A Patch may carry a label per change (`sources`, e.g. the finding
it came from) that the artefacts print next to each line; the patcher does not interpret it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from headroom.domain.model import Change

DEFAULT_SERVER_PORT = 20160  # docs/reference/tikv-metrics.md#status-port: the gRPC/server address default is 127.0.0.1:20160
DEFAULT_STATUS_PORT = 20180


def target_node(change: Change) -> str | None:
    """Return the TiKV node a tikv change is for (a status address once resolved), or None for every node."""
    return change.entity.tikv_node() if change.entity is not None else None


class PatchTarget(BaseModel):
    """A TiKV instance a patch addresses: status address (SET CONFIG), server address (tikv-ctl) and EC2 instance
    (the snapshot's `Node` is the instance with its metrics; this is only how a patch reaches it)."""

    model_config = ConfigDict(frozen=True)

    status_address: str
    address: str | None = None
    instance_id: str | None = None
    name: str | None = None
    store_id: int | None = None
    data_mount: str | None = Field(
        default=None, description="Mount point holding storage.data-dir, as node_exporter reports it (mountpoint)."
    )
    data_fstype: str | None = Field(
        default=None, description="Filesystem type of that mount, as node_exporter reports it (fstype: xfs, ext4)."
    )

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
    nodes: tuple[PatchTarget, ...] = ()
    changes: tuple[Change, ...] = ()
    region: str | None = Field(default=None, description="AWS region of the instances and volumes, if known.")
    pd_url: str | None = Field(default=None, description="A PD client URL (http://<pd>:2379), if known.")
    tiup_name: str | None = Field(
        default=None, description="The cluster's name in TiUP (tiup cluster list), if known: `cluster` is Headroom's "
        "display name, which TiUP's may differ from, so tiup command lines use this one or a placeholder.")
    sources: tuple[str, ...] = Field(
        default=(), description="Where each change comes from (same order as changes; empty: not said): the finding's "
        "key, which a machine reads (the new volume's AWS tag finds it again by it)."
    )
    source_titles: tuple[str, ...] = Field(
        default=(), description="Each change's finding in words, its title (same order as changes; empty: not said): "
        "what the artefacts' comments print, never the key."
    )

    @model_validator(mode="after")
    def _one_source_per_change(self) -> Patch:
        if self.sources and len(self.sources) != len(self.changes):
            raise ValueError(f"{len(self.sources)} sources for {len(self.changes)} changes")
        if self.source_titles and len(self.source_titles) != len(self.changes):
            raise ValueError(f"{len(self.source_titles)} finding titles for {len(self.changes)} changes")
        return self

    def source(self, index: int) -> str:
        """Return the label of the change at `index` ("" when the patch gives none)."""
        return self.sources[index] if self.sources else ""

    def source_title(self, index: int) -> str:
        """Return the finding of the change at `index` in words ("" when the patch gives none)."""
        return self.source_titles[index] if self.source_titles else ""

    def tikv_changes(self) -> tuple[Change, ...]:
        """Return the tikv.toml changes, in order."""
        return tuple(change for change in self.changes if change.target == "tikv")

    def aws_changes(self) -> tuple[Change, ...]:
        """Return the AWS changes, in order."""
        return tuple(change for change in self.changes if change.target == "aws")

    def node(self, status_address: str) -> PatchTarget:
        """Return the node with this status address (a bare target if the snapshot did not list it)."""
        for node in self.nodes:
            if node.status_address == status_address:
                return node
        return PatchTarget(status_address=status_address)

    def store_address(self, status_address: str) -> str:
        """Return the store address (`<ip>:20160`) of the node with this status address: the name TiKV, PD and
        TiDB Dashboard give a store; the status address is only for the commands that talk to it."""
        return self.node(status_address).server_address()

    def nodes_on(self, instance_id: str) -> tuple[PatchTarget, ...]:
        """Return the TiKV nodes running on an EC2 instance (usually one)."""
        return tuple(node for node in self.nodes if node.instance_id == instance_id)


def pd_url_of(configs: Iterable[Mapping[str, Any]]) -> str | None:
    """Return a PD client URL from TiKV's own config (dotted view): the first of `pd.endpoints`, https when the node
    talks TLS (`security.ca-path` set; TiKV configuration file, [pd] endpoints and [security]); None if none says."""
    for view in configs:
        endpoints = view.get("pd.endpoints")
        if isinstance(endpoints, str):
            endpoints = [endpoints]
        if not isinstance(endpoints, list) or not endpoints or not isinstance(endpoints[0], str):
            continue
        first = endpoints[0].strip()
        if not first or "127.0.0.1" in first or "localhost" in first:
            continue  # the default: the node's own loopback, not an address a script elsewhere can reach
        if "://" in first:
            return first
        return ("https://" if view.get("security.ca-path") else "http://") + first
    return None


def resolve_nodes(changes: Iterable[Change], nodes: Sequence[PatchTarget]) -> tuple[Change, ...]:
    """Give each tikv change the status address of its node (named by id, server or status address, or by its
    instance when exactly one TiKV runs there) in `entity.status_address`."""
    aliases: dict[str, str] = {}
    for node in nodes:
        for alias in (node.name, node.address, node.status_address, node.instance_id):
            if alias:
                aliases.setdefault(alias, node.status_address)
    resolved: list[Change] = []
    for change in changes:
        entity = change.entity
        if change.target != "tikv" or entity is None:
            resolved.append(change)
            continue
        names = (entity.status_address, entity.node, entity.id if entity.kind == "node" else None)
        address = next((aliases[name] for name in names if name and name in aliases), None)
        if address is None and entity.tikv_node() is None and entity.instance() is not None:
            on_instance = [node.status_address for node in nodes if node.instance_id == entity.instance()]
            address = on_instance[0] if len(on_instance) == 1 else None
        if address is None or address == entity.status_address:
            resolved.append(change)
            continue
        located = entity.model_copy(update={"status_address": address})
        resolved.append(change.model_copy(update={"entity": located}))
    return tuple(resolved)


def has_port(address: str) -> bool:
    """Whether an address ends in `:port`."""
    return re.search(r":\d+$", address) is not None


def host_of(address: str) -> str:
    """Return the host part of `host:port` (IPv6 brackets kept); an address without a port is its own host."""
    if address.startswith("["):
        return address.split("]", 1)[0] + "]"
    return address.rsplit(":", 1)[0] if has_port(address) else address


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
