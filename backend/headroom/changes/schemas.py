"""The change ledger's API shapes."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Literal

from pydantic import Field

from headroom.domain.advisor.outcome import FixOutcome
from headroom.findings.schemas import WhatIfRead as WhatIfRead  # the ledger's predicted effect (changes.service)
from headroom.platform.schemas import Output


class ChangedValue(Output):
    """One key that changed: a TiKV config key, or an AWS attribute (volume.iops, instance.type, ...)."""

    key: str
    before: Any = Field(description="null: not set (or unknown) before.")
    after: Any
    before_text: str = Field(description="`before` as a person reads it: a tikv.toml value as the config writes it "
                                         "(\"8GiB\", true), an AWS value with its unit, an absent value in words "
                                         "(\"not set (TiKV default 8GiB)\" when the default is known).")
    after_text: str = Field(description="`after` as a person reads it (as before_text).")


class PredictedEffect(Output):
    """What the advisor predicted for the fix when it last judged the finding (its stored impact)."""

    summary: str
    metric: str | None
    unit: str | None
    before: float | None
    after: float | None
    headroom_before_pct: float | None
    headroom_after_pct: float | None
    monthly_cost_delta_usd: float | None


class AddressedFinding(Output):
    """A finding the change addressed, and where it stands now."""

    id: uuid.UUID
    rule: str
    severity: str
    title: str
    status: str
    resolved_at: dt.datetime | None
    resolved_after_change: bool = Field(description="Resolved at or after the change (the change cleared it).")
    predicted: PredictedEffect | None
    outcome: FixOutcome | None = Field(
        description="Whether the fix did what the finding predicted: the predicted and the measured use of the "
        "ceiling it moves, over the ledger's windows (How Headroom decides: Fix outcomes).")


class MeasuredCell(Output):
    """Peak use of one ceiling of one store before and after, each against the ceiling in force then."""

    node: str
    node_id: uuid.UUID = Field(description="The store's id: its charts are GET /clusters/{id}/metrics?node_id=.")
    metric: Literal["data_iops", "data_throughput", "raft_iops", "raft_throughput", "instance_iops",
                    "instance_throughput"]
    before_peak_percent: float | None
    after_peak_percent: float | None
    ceiling_after: str | None = Field(description="The ceiling in force after the change, with its value.")


class MeasuredEffect(Output):
    """Before and after over comparable windows: the after window runs from the change for up to 7 days; the
    before window covers the same hours of the week one week earlier (docs/changes.md)."""

    before_start: dt.datetime
    before_end: dt.datetime
    after_start: dt.datetime
    after_end: dt.datetime
    cells: list[MeasuredCell]
    note: str | None = Field(description="Why there is nothing to compare yet, or what to read with care.")


class ChangeEntry(Output):
    """One change of the cluster: a patch marked applied, or a change Headroom saw."""

    id: str
    kind: Literal["patch_applied", "apply", "apply_undo", "inventory", "config", "config_upload"] = Field(
        description="patch_applied: a patch marked applied (with what Headroom saw of its own changes); apply: a "
        "step of an approved plan Headroom applied itself (read back on the node or volume); apply_undo: Headroom "
        "set the value back (a rollback or a confirmed undo); inventory: "
        "a change seen in the EC2 inventory; config: a change seen in a node's live TiKV config; config_upload: a "
        "change between a node's config and a tikv.toml uploaded for it. An observed change is credited to a patch "
        "only when it is one of the patch's own changes (same key on the same node, the patch's value).")
    at: dt.datetime
    who: str = Field(description="Who marked it applied, or which source Headroom saw it in.")
    entity_kind: Literal["volume", "instance", "node", "cluster"]
    entity_id: str
    changes: list[ChangedValue]
    patch_id: uuid.UUID | None
    seen_by_headroom: list[str] = Field(description="For a patch: the changes Headroom later saw take effect.")
    findings: list[AddressedFinding]
    predicted: WhatIfRead | None = Field(
        description="The what-if of the change on the day before it (the inventory and config set back to what they "
        "were): the ceilings it moves, the findings it was expected to clear, the cost; null beyond the newest "
        "entries or when it cannot be tried (see predicted_note).")
    predicted_note: str | None
    effect: MeasuredEffect | None


class ChangeLedger(Output):
    """The cluster's changes, newest first, over the last `days` days."""

    items: list[ChangeEntry]
    days: int


class RuleAccuracy(Output):
    """How often a rule's predictions held for the org's applied fixes over the last `days` days."""

    days: int
    measured: int = Field(description="Applied fixes whose outcome is held, partly or missed.")
    held: int
    partly: int
    missed: int
    too_early: int
    not_measurable: int
    held_share: float | None = Field(description="held / measured; null when nothing was measured.")
    statement: str = Field(description='In words: "The prediction held for 7 of 9 applied fixes measured in the '
                                       'last 90 days (1 partly, 1 missed)."')


class RuleRead(Output):
    """One advisor rule and its record of predictions."""

    id: str
    family: str
    description: str
    accuracy: RuleAccuracy


class RuleList(Output):
    """Every advisor rule, with how often its predictions held for this organisation's clusters."""

    items: list[RuleRead]
    days: int
