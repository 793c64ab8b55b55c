"""Projections: one row per (cluster, entity, metric) with days until its ceiling.

Replaced by each daily fit (unique cluster, entity kind, entity id, metric), deleted with its cluster.

Revision ID: 7c3d5e9a1b08
Revises: 5b8e0f2c9d17
Create Date: 2026-11-24 02:15:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "7c3d5e9a1b08"
down_revision: str | None = "5b8e0f2c9d17"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "projections",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("cluster_id", sa.Uuid(), nullable=False),
        sa.Column("entity_kind", sa.String(length=16), nullable=False),
        sa.Column("entity_id", sa.String(length=200), nullable=False),
        sa.Column("metric", sa.String(length=16), nullable=False),
        sa.Column("unit", sa.String(length=16), nullable=False),
        sa.Column("ceiling", sa.Float(), nullable=False),
        sa.Column("ceiling_source", sa.Text(), nullable=False),
        sa.Column("method", sa.String(length=16), nullable=False),
        sa.Column("history_hours", sa.Integer(), nullable=False),
        sa.Column("level_now", sa.Float(), nullable=False),
        sa.Column("growth_percent_per_week", sa.Float(), nullable=True),
        sa.Column("days", sa.Float(), nullable=True),
        sa.Column("days_low", sa.Float(), nullable=True),
        sa.Column("days_high", sa.Float(), nullable=True),
        sa.Column("hits_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("horizon_days", sa.Float(), nullable=False),
        sa.Column("interval", sa.Float(), nullable=False),
        sa.Column("band", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("notes", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("history_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("history_end", sa.DateTime(timezone=True), nullable=False),
        sa.Column("fitted_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["cluster_id"], ["clusters.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["org_id"], ["organizations.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("cluster_id", "entity_kind", "entity_id", "metric"),
    )
    op.create_index(op.f("ix_projections_cluster_id"), "projections", ["cluster_id"])
    op.create_index(op.f("ix_projections_org_id"), "projections", ["org_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_projections_org_id"), table_name="projections")
    op.drop_index(op.f("ix_projections_cluster_id"), table_name="projections")
    op.drop_table("projections")
