"""The apply feature's API shapes (docs/apply.md): the opt-in, and plans made from a finding's fix."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from headroom.domain.apply.guards import Guard
from headroom.domain.apply.run import GuardReading
from headroom.domain.apply.plan import MaintenanceWindow, PlanStep, Refusal
from headroom.domain.model import Impact
from headroom.platform.schemas import Input, Output
from headroom.sources.schemas import RoleArn, TagKey, TagValue



WHAT_APPLY_ALLOWS = [
    "Change an EBS volume's type (gp2 to gp3), IOPS or throughput, on volumes carrying your tag only, through a "
    "separate write role you create; one volume at a time.",
    "Set TiKV settings that change without a restart, one node at a time, through the node's status port.",
    "Nothing runs until a plan is approved by an owner or admin other than the one who proposed it.",
]
WHAT_APPLY_NEVER_DOES = [
    "Grow or shrink a volume, change an instance type, stop or restart anything: those stay downloadable patches.",
]


class OrgApplySettingsRead(Output):
    """Whether Headroom may apply fixes in this organisation, with the write role and the volume tag it uses."""

    enabled: bool = Field(description="Apply is on for the organisation (each cluster must be turned on too).")
    role_arn: str | None = Field(description="The write role Headroom assumes to modify volumes (null: not set; "
                                 "volume changes cannot be applied).")
    volume_tag_key: str | None = Field(description="Headroom may modify only volumes carrying this tag.")
    volume_tag_value: str | None
    allows: list[str] = Field(description="What turning it on allows, in words.")
    never: list[str] = Field(description="What apply never does, in words.")


class OrgApplySettingsUpdate(Input):
    enabled: bool = Field(title="Apply")
    role_arn: RoleArn | None = Field(default=None, title="Write role ARN")
    volume_tag_key: TagKey | None = Field(default=None, title="Volume tag key")
    volume_tag_value: TagValue | None = Field(default=None, title="Volume tag value")


class ClusterApplySettingsRead(Output):
    """Whether Headroom may apply fixes on this cluster: its own switch and its organisation's; both must be on."""

    enabled: bool = Field(description="The cluster's own switch.")
    organization_enabled: bool
    effective_enabled: bool = Field(description="Apply is allowed on this cluster: the organisation's and the "
                                    "cluster's switches are both on.")
    allows: list[str]


class ClusterApplySettingsUpdate(Input):
    enabled: bool = Field(title="Apply on this cluster")


class ApplyPlanCreate(Input):
    """Propose a plan from a finding's fix."""

    finding_id: uuid.UUID = Field(title="Finding")
    maintenance_window: MaintenanceWindow | None = Field(default=None, title="Maintenance window")


class ApplyDecision(Input):
    note: Annotated[str, StringConstraints(max_length=2000)] = Field(default="", title="Note")


Scalar = str | int | float | bool | None


class StepRunRead(Output):
    """How far a step has run (pending until the plan runs): pending (not started), running, verifying (applied,
    watched), done, failed, undoing, undone (rolled back), skipped (not started: the run rolled back), stopped
    (not started: the run was stopped), unknown (stopped mid-step; `error` says what was last read)."""

    position: int
    status: Literal["pending", "running", "verifying", "done", "failed", "undoing", "undone", "skipped", "stopped",
                    "unknown"]
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    watch_until: dt.datetime | None = Field(description="The end of the step's watch (while verifying).")
    undo_not_before: dt.datetime | None
    undo_confirmed_at: dt.datetime | None = Field(description="When a user confirmed the volume's undo.")
    before: Scalar = Field(description="The value read before the step (TiKV's units; a volume: what AWS reported).")
    read_back: Scalar = Field(description="The value read back after the step.")
    restored: Scalar = Field(description="The value read back after the rollback set the old one again.")
    modification_state: str | None = Field(description="A volume: the modification's state as AWS last reported.")
    note: str | None
    guard_readings: list[GuardReading]
    error: str | None


class ApplyPlanPreview(Output):
    """What applying a finding's fix would do, before anything is proposed."""

    finding_id: uuid.UUID
    finding_title: str
    cluster_id: uuid.UUID
    tikv_version: str | None
    steps: list[PlanStep] = Field(description="The steps, one at a time, in order.")
    refusals: list[Refusal] = Field(description="The fix's changes Headroom will not apply itself, with why.")
    guards: list[Guard] = Field(description="What is watched after each step, and when it stops the run.")
    predicted: Impact | None = Field(description="The finding's predicted effect and cost (its what-if numbers).")
    blocked: list[str] = Field(description="Why the plan cannot be proposed now, in words (empty: it can).")


class ApplyPlanRead(ApplyPlanPreview):
    """A proposed plan and its decision."""

    id: uuid.UUID
    finding_id: uuid.UUID | None  # type: ignore[assignment]
    status: Literal["proposed", "approved", "rejected", "cancelled", "running", "succeeded", "failed", "rolled_back",
                    "stopped"]
    maintenance_window: MaintenanceWindow | None
    proposed_by: str | None = Field(description="Who proposed it (their email; null: no longer a user).")
    proposed_at: dt.datetime
    decided_by: str | None
    decided_at: dt.datetime | None
    decision_note: str
    run_by: str | None = Field(description="Who started the run (their email).")
    run_started_at: dt.datetime | None
    run_finished_at: dt.datetime | None
    stop_requested_at: dt.datetime | None
    outcome: str = Field(description="Where the run is, or how it ended, in words.")
    step_runs: list[StepRunRead]


class ApplyStopAll(Output):
    """The organisation's runs that were stopped."""

    stopped: list[uuid.UUID]
