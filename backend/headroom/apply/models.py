"""Apply plans and their steps' run state (docs/apply.md).

A plan is made from one finding's fix and frozen when proposed: its steps, refusals and guards are the domain's
types in typed JSON columns. Each step also has a row in apply_steps that a run writes to (status, times, what it
read back, the guard readings, the error), so a run can be resumed after a worker dies and undone step by step.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, TypeAdapter
from sqlalchemy import ForeignKey, Index, SmallInteger, String, Text, UniqueConstraint, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from headroom.domain.apply.guards import Guard
from headroom.domain.apply.plan import MaintenanceWindow, PlanStep, Refusal
from headroom.domain.model import Impact
from headroom.platform.orm import Base, created_at_column, enum_column, fk_column, uuid_pk

PLAN_STATUSES = ("proposed", "approved", "rejected", "cancelled", "running", "succeeded", "failed", "rolled_back",
                 "stopped")
OPEN_PLAN_STATUSES = ("proposed", "approved", "running")
# stopped: never started because the run was stopped; unknown: stopped mid-step (what was last read is recorded).
STEP_STATUSES = ("pending", "running", "verifying", "done", "failed", "undoing", "undone", "skipped", "stopped",
                 "unknown")

M = TypeVar("M", bound=BaseModel)


class _ModelsJSON(TypeDecorator[list[M]], Generic[M]):
    """A list of one domain model in a JSONB column, read back as the models."""

    impl = JSONB
    cache_ok = True
    model: type[BaseModel]

    def process_bind_param(self, value: list[M] | None, dialect: Dialect) -> Any:
        return None if value is None else [self.model.model_validate(v).model_dump(mode="json") for v in value]

    def process_result_value(self, value: Any, dialect: Dialect) -> list[M] | None:
        return None if value is None else TypeAdapter(list[self.model]).validate_python(value)  # type: ignore[name-defined]


class PlanStepsJSON(_ModelsJSON[PlanStep]):
    model = PlanStep


class RefusalsJSON(_ModelsJSON[Refusal]):
    model = Refusal


class GuardsJSON(_ModelsJSON[Guard]):
    model = Guard


class _ModelJSON(TypeDecorator[M], Generic[M]):
    impl = JSONB
    cache_ok = True
    model: type[BaseModel]

    def process_bind_param(self, value: M | None, dialect: Dialect) -> Any:
        return None if value is None else self.model.model_validate(value).model_dump(mode="json")

    def process_result_value(self, value: Any, dialect: Dialect) -> M | None:
        return None if value is None else self.model.model_validate(value)  # type: ignore[return-value]


class WindowJSON(_ModelJSON[MaintenanceWindow]):
    model = MaintenanceWindow


class ImpactColumnJSON(_ModelJSON[Impact]):
    model = Impact


class ApplyPlan(Base):
    __tablename__ = "apply_plans"
    __table_args__ = (
        # One open plan per finding: a second proposal while one waits or runs is refused.
        Index("uq_apply_plans_open_finding", "finding_id", unique=True,
              postgresql_where=text("status IN ('proposed', 'approved', 'running')")),
    )

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    cluster_id: Mapped[uuid.UUID] = fk_column("clusters.id")
    finding_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("findings.id", ondelete="SET NULL"), index=True)
    finding_title: Mapped[str] = mapped_column(String(500))
    status: Mapped[str] = mapped_column(enum_column("apply_plan_status", PLAN_STATUSES), default="proposed")
    tikv_version: Mapped[str | None] = mapped_column(String(40))
    steps: Mapped[list[PlanStep]] = mapped_column(PlanStepsJSON)
    refusals: Mapped[list[Refusal]] = mapped_column(RefusalsJSON)
    guards: Mapped[list[Guard]] = mapped_column(GuardsJSON)
    predicted: Mapped[Impact | None] = mapped_column(ImpactColumnJSON)
    maintenance_window: Mapped[MaintenanceWindow | None] = mapped_column(WindowJSON)
    proposed_by_user_id: Mapped[uuid.UUID | None] = fk_column("users.id", nullable=True, ondelete="SET NULL")
    proposed_at: Mapped[dt.datetime]
    decided_by_user_id: Mapped[uuid.UUID | None] = fk_column("users.id", nullable=True, ondelete="SET NULL")
    decided_at: Mapped[dt.datetime | None]
    decision_note: Mapped[str] = mapped_column(Text, default="", server_default="")
    # The run: who started it and when, when it ended, a stop asked for (the kill switch) and the outcome in words.
    run_by_user_id: Mapped[uuid.UUID | None] = fk_column("users.id", nullable=True, ondelete="SET NULL")
    run_started_at: Mapped[dt.datetime | None]
    run_finished_at: Mapped[dt.datetime | None]
    stop_requested_at: Mapped[dt.datetime | None]
    outcome: Mapped[str] = mapped_column(Text, default="", server_default="")
    created_at: Mapped[dt.datetime] = created_at_column()


class ApplyStepRun(Base):
    """The run state of one step of a plan (written by the run, next to the frozen step in the plan)."""

    __tablename__ = "apply_steps"
    __table_args__ = (UniqueConstraint("plan_id", "position"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    plan_id: Mapped[uuid.UUID] = fk_column("apply_plans.id")
    position: Mapped[int] = mapped_column(SmallInteger)
    status: Mapped[str] = mapped_column(enum_column("apply_step_status", STEP_STATUSES), default="pending")
    started_at: Mapped[dt.datetime | None]
    finished_at: Mapped[dt.datetime | None]
    # The earliest time the step can be undone (a volume: six hours after its modification started).
    undo_not_before: Mapped[dt.datetime | None]
    # What the run read back (the value before, the value after) and the guards' readings before and after.
    observed: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default=text("'{}'::jsonb"))
    guard_readings: Mapped[list[dict[str, Any]]] = mapped_column(JSONB, default=list,
                                                                 server_default=text("'[]'::jsonb"))
    error: Mapped[str | None] = mapped_column(Text)
    # The end of the step's watch: the next step starts only after it, and only if the guards held.
    watch_until: Mapped[dt.datetime | None]
    # A volume's undo, confirmed by a user (it runs once the earliest undo time has passed).
    undo_confirmed_at: Mapped[dt.datetime | None]
