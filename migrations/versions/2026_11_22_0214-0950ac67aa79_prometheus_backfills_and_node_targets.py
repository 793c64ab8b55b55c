"""prometheus backfills and node targets (backfill progress, scrape target -> tikv node)

Revision ID: 0950ac67aa79
Revises: 993e3e3a4d0a
Create Date: 2026-11-22 02:14:51.482875+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0950ac67aa79"
down_revision: str | None = "993e3e3a4d0a"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "prometheus_backfills",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("source_id", sa.Uuid(), nullable=False),
        sa.Column(
            "status",
            sa.Enum(
                "queued",
                "running",
                "done",
                "failed",
                name="backfill_status",
                native_enum=False,
                create_constraint=True,
                length=16,
            ),
            server_default="queued",
            nullable=False,
        ),
        sa.Column("range_start_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("range_end_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("steps_total", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("steps_done", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("points_written", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("dropped_non_finite", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("dropped_outside", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["org_id"],
            ["organizations.id"],
            name=op.f("fk_prometheus_backfills_org_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["prometheus_sources.id"],
            name=op.f("fk_prometheus_backfills_source_id_prometheus_sources"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_prometheus_backfills")),
        sa.UniqueConstraint("source_id", name=op.f("uq_prometheus_backfills_source_id")),
    )
    op.create_index(op.f("ix_prometheus_backfills_org_id"), "prometheus_backfills", ["org_id"], unique=False)
    op.create_table(
        "prometheus_node_targets",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("source_id", sa.Uuid(), nullable=False),
        sa.Column("node_id", sa.Uuid(), nullable=False),
        sa.Column("instance", sa.String(length=255), nullable=False),
        sa.Column(
            "flavour",
            sa.Enum(
                "tiup", "operator", name="prom_flavour", native_enum=False, create_constraint=True, length=16
            ),
            nullable=False,
        ),
        sa.Column(
            "labels",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.Column(
            "first_seen_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
        sa.Column(
            "last_seen_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["node_id"],
            ["tikv_nodes.id"],
            name=op.f("fk_prometheus_node_targets_node_id_tikv_nodes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["org_id"],
            ["organizations.id"],
            name=op.f("fk_prometheus_node_targets_org_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["prometheus_sources.id"],
            name=op.f("fk_prometheus_node_targets_source_id_prometheus_sources"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_prometheus_node_targets")),
        sa.UniqueConstraint(
            "source_id", "instance", name=op.f("uq_prometheus_node_targets_source_id_instance")
        ),
    )
    op.create_index(
        op.f("ix_prometheus_node_targets_node_id"), "prometheus_node_targets", ["node_id"], unique=False
    )
    op.create_index(
        op.f("ix_prometheus_node_targets_org_id"), "prometheus_node_targets", ["org_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_prometheus_node_targets_org_id"), table_name="prometheus_node_targets")
    op.drop_index(op.f("ix_prometheus_node_targets_node_id"), table_name="prometheus_node_targets")
    op.drop_table("prometheus_node_targets")
    op.drop_index(op.f("ix_prometheus_backfills_org_id"), table_name="prometheus_backfills")
    op.drop_table("prometheus_backfills")
