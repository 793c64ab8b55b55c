"""Patches: a stored set of accepted changes against a config version, downloadable in every format."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Literal

from pydantic import ConfigDict, Field

from headroom.domain.model import Change
from headroom.platform.schemas import Input, Output

PatchFormat = Literal["toml", "merged", "diff", "tiup", "operator", "sql", "tikv-ctl", "aws", "terraform", "configs"]
# The one-file rollback bundle this format named is gone (each format has its own rollback, ?rollback=true): an old
# link gets a 400 that says so instead of a validation error.
RemovedFormat = Literal["rollback"]


class PatchCreate(Input):
    finding_ids: list[uuid.UUID] | Literal["all_open"] = Field(
        description='The findings whose changes to include, or "all_open" (open and acknowledged findings).'
    )
    base_config: uuid.UUID | Literal["latest"] = Field(
        default="latest",
        description='The config version to patch: "latest" (each node\'s newest) or a config id of a node.',
    )
    options: dict[uuid.UUID, int] = Field(
        default_factory=dict,
        description="For a finding with several options, which one to apply (0-based index into the finding's "
        "options); a finding not named gets its first option.",
    )


class OperatorManifest(Input):
    # the file as given, whitespace included: the rollback gives it back byte for byte
    model_config = ConfigDict(str_strip_whitespace=False)

    manifest: str = Field(
        max_length=512 * 1024,
        description="Your TidbCluster (v1) or TiKVGroup (v2) YAML; the patch changes only the proposed keys in it.",
    )
    rollback: bool = Field(
        default=False,
        description="The JSON patch that takes the patched object back to this manifest's config (give the manifest "
        "the patch was made from): keys it added removed again, values it changed put back, each tested first.",
    )


class TiupTopology(Input):
    # the file as given, whitespace included: the rollback gives it back byte for byte
    model_config = ConfigDict(str_strip_whitespace=False)

    topology: str = Field(
        max_length=512 * 1024,
        description="Your TiUP topology (tiup cluster edit-config / show-config); returned with the changes made "
        "in place, after TiUP's precedence, comments kept.",
    )
    rollback: bool = Field(
        default=False,
        description="The rollback instead: the topology the patch was made from, as given (edit-config "
        "--topology-file replaces the whole topology, so it is the exact rollback).",
    )


class PatchNodeRead(Output):
    status_address: str
    address: str = Field(description="The node's store (server) address.")
    keys: list[str] = Field(description="The tikv.toml keys the patch changes on this node.")
    has_config: bool = Field(
        description="A config of the node is stored, so its merged file and diff can be downloaded (?node=)."
    )


class BaseConfigRead(Output):
    id: uuid.UUID
    node_id: uuid.UUID
    version: int
    source: str
    captured_at: dt.datetime
    has_raw_text: bool = Field(description="An uploaded tikv.toml is stored (merged/diff use it as written).")


class PatchRead(Output):
    id: uuid.UUID
    cluster_id: uuid.UUID
    created_by_user_id: uuid.UUID | None
    created_at: dt.datetime
    finding_ids: list[uuid.UUID]
    base_config_id: uuid.UUID | None
    base_config: BaseConfigRead | None
    changes: list[Change] = Field(
        description="The findings' changes as stored with them, a tikv change's node resolved to its status address "
        "(entity.status_address) and its current value read from the base config (what the rollback restores)."
    )
    change_sources: list[str] = Field(
        description="The finding (its dedup key) each change comes from, in the order of changes."
    )
    notes: list[str]
    applied_at: dt.datetime | None
    applied_by_user_id: uuid.UUID | None
    nodes: list[PatchNodeRead] = Field(
        description="The nodes whose tikv.toml the patch changes (every node for a cluster-wide change); merged and "
        "diff are offered for these only, one node at a time (?node=), or all in one zip (format=configs)."
    )
    formats: list[PatchFormat] = Field(description="Formats this patch can be downloaded as (?format=).")


class PatchList(Output):
    items: list[PatchRead]
    total: int
