"""Apply (docs/apply.md): the opt-in per organisation and per cluster (off by default), the write role and its
volume tag per organisation, the plans made from a finding's fix and their steps' run state.

Revision ID: b7e4c1d9a2f6
Revises: 5e2c8b1d7f43
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "b7e4c1d9a2f6"
down_revision: str | None = "5e2c8b1d7f43"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PLAN_STATUSES = ("proposed", "approved", "rejected", "cancelled", "running", "succeeded", "failed", "rolled_back")
STEP_STATUSES = ("pending", "running", "verifying", "done", "failed", "undoing", "undone", "skipped")


def _enum(name: str, values: tuple[str, ...]) -> sa.Enum:
    return sa.Enum(*values, name=name, native_enum=False, create_constraint=True, length=32)


def upgrade() -> None:
    op.add_column("organizations", sa.Column("apply_enabled", sa.Boolean(), server_default=sa.text("false"),
                                             nullable=False))
    op.add_column("organizations", sa.Column("apply_role_arn", sa.String(2048), nullable=True))
    op.add_column("organizations", sa.Column("apply_volume_tag_key", sa.String(128), nullable=True))
    op.add_column("organizations", sa.Column("apply_volume_tag_value", sa.String(256), nullable=True))
    op.add_column("clusters", sa.Column("apply_enabled", sa.Boolean(), server_default=sa.text("false"),
                                        nullable=False))
    op.create_table(
        "apply_plans",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("cluster_id", sa.Uuid(), nullable=False),
        sa.Column("finding_id", sa.Uuid(), nullable=True),
        sa.Column("finding_title", sa.String(500), nullable=False),
        sa.Column("status", _enum("apply_plan_status", PLAN_STATUSES), nullable=False),
        sa.Column("tikv_version", sa.String(40), nullable=True),
        sa.Column("steps", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("refusals", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("guards", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("predicted", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("maintenance_window", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("proposed_by_user_id", sa.Uuid(), nullable=True),
        sa.Column("proposed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_by_user_id", sa.Uuid(), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("decision_note", sa.Text(), server_default="", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["org_id"], ["organizations.id"], name=op.f("fk_apply_plans_org_id_organizations"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["cluster_id"], ["clusters.id"], name=op.f("fk_apply_plans_cluster_id_clusters"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["finding_id"], ["findings.id"], name=op.f("fk_apply_plans_finding_id_findings"),
                                ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["proposed_by_user_id"], ["users.id"],
                                name=op.f("fk_apply_plans_proposed_by_user_id_users"), ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["decided_by_user_id"], ["users.id"],
                                name=op.f("fk_apply_plans_decided_by_user_id_users"), ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_apply_plans")),
    )
    for column in ("org_id", "cluster_id", "finding_id", "proposed_by_user_id", "decided_by_user_id"):
        op.create_index(op.f(f"ix_apply_plans_{column}"), "apply_plans", [column])
    op.create_index("uq_apply_plans_open_finding", "apply_plans", ["finding_id"], unique=True,
                    postgresql_where=sa.text("status IN ('proposed', 'approved', 'running')"))
    op.create_table(
        "apply_steps",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("plan_id", sa.Uuid(), nullable=False),
        sa.Column("position", sa.SmallInteger(), nullable=False),
        sa.Column("status", _enum("apply_step_status", STEP_STATUSES), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("undo_not_before", sa.DateTime(timezone=True), nullable=True),
        sa.Column("observed", postgresql.JSONB(astext_type=sa.Text()), server_default=sa.text("'{}'::jsonb"),
                  nullable=False),
        sa.Column("guard_readings", postgresql.JSONB(astext_type=sa.Text()), server_default=sa.text("'[]'::jsonb"),
                  nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["org_id"], ["organizations.id"], name=op.f("fk_apply_steps_org_id_organizations"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["plan_id"], ["apply_plans.id"], name=op.f("fk_apply_steps_plan_id_apply_plans"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_apply_steps")),
        sa.UniqueConstraint("plan_id", "position", name=op.f("uq_apply_steps_plan_id_position")),
    )
    op.create_index(op.f("ix_apply_steps_org_id"), "apply_steps", ["org_id"])
    op.create_index(op.f("ix_apply_steps_plan_id"), "apply_steps", ["plan_id"])


def downgrade() -> None:
    op.drop_table("apply_steps")
    op.drop_table("apply_plans")
    op.drop_column("clusters", "apply_enabled")
    for column in ("apply_volume_tag_value", "apply_volume_tag_key", "apply_role_arn", "apply_enabled"):
        op.drop_column("organizations", column)
