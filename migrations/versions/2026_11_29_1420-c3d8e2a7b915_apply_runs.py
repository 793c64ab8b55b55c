"""Apply runs (docs/apply.md): who started a run and when, a stop asked for (the kill switch), the run's outcome in
words, the end of each step's watch, a volume undo confirmed by a user; plans can end "stopped", steps "stopped"
(never started because the run was stopped) or "unknown" (stopped mid-step: what was last read is recorded).

Revision ID: c3d8e2a7b915
Revises: c4d8a2e6f1b3
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c3d8e2a7b915"
down_revision: str | None = "c4d8a2e6f1b3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_PLAN = ("proposed", "approved", "rejected", "cancelled", "running", "succeeded", "failed", "rolled_back")
OLD_STEP = ("pending", "running", "verifying", "done", "failed", "undoing", "undone", "skipped")
NEW_PLAN = (*OLD_PLAN, "stopped")
NEW_STEP = (*OLD_STEP, "stopped", "unknown")


def _check(table: str, name: str, values: tuple[str, ...]) -> None:
    op.drop_constraint(op.f(f"ck_{table}_{name}"), table, type_="check")
    listed = ", ".join(f"'{v}'" for v in values)
    op.create_check_constraint(name, table, sa.text(f"status IN ({listed})"))


def upgrade() -> None:
    _check("apply_plans", "apply_plan_status", NEW_PLAN)
    _check("apply_steps", "apply_step_status", NEW_STEP)
    op.add_column("apply_plans", sa.Column("run_by_user_id", sa.Uuid(), nullable=True))
    op.create_foreign_key(op.f("fk_apply_plans_run_by_user_id_users"), "apply_plans", "users", ["run_by_user_id"],
                          ["id"], ondelete="SET NULL")
    op.create_index(op.f("ix_apply_plans_run_by_user_id"), "apply_plans", ["run_by_user_id"])
    op.add_column("apply_plans", sa.Column("run_started_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("apply_plans", sa.Column("run_finished_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("apply_plans", sa.Column("stop_requested_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("apply_plans", sa.Column("outcome", sa.Text(), server_default="", nullable=False))
    op.add_column("apply_steps", sa.Column("watch_until", sa.DateTime(timezone=True), nullable=True))
    op.add_column("apply_steps", sa.Column("undo_confirmed_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.execute("UPDATE apply_steps SET status = 'skipped' WHERE status IN ('stopped', 'unknown')")
    op.execute("UPDATE apply_plans SET status = 'failed' WHERE status = 'stopped'")
    op.drop_column("apply_steps", "undo_confirmed_at")
    op.drop_column("apply_steps", "watch_until")
    for column in ("outcome", "stop_requested_at", "run_finished_at", "run_started_at"):
        op.drop_column("apply_plans", column)
    op.drop_index(op.f("ix_apply_plans_run_by_user_id"), "apply_plans")
    op.drop_constraint(op.f("fk_apply_plans_run_by_user_id_users"), "apply_plans", type_="foreignkey")
    op.drop_column("apply_plans", "run_by_user_id")
    _check("apply_steps", "apply_step_status", OLD_STEP)
    _check("apply_plans", "apply_plan_status", OLD_PLAN)
