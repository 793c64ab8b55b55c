"""backfill_steps: the planned steps of a history backfill, so a killed backfill resumes where it stopped;
aws_backfills.window_end_at: the planned window's end, kept so a resumed run reads the same window

Revision ID: b8f31c6d2e47
Revises: 7c41e2a9d5b3
Create Date: 2026-11-22 05:10:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "b8f31c6d2e47"
down_revision: str | None = "7c41e2a9d5b3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "backfill_steps",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("source_kind", sa.Enum("aws", "prometheus", name="backfill_source_kind", native_enum=False,
                                         create_constraint=True, length=16), nullable=False),
        sa.Column("source_id", sa.Uuid(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("spec", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("points", sa.BigInteger(), nullable=False),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["org_id"], ["organizations.id"], name=op.f("fk_backfill_steps_org_id_organizations"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_backfill_steps")),
        sa.UniqueConstraint("source_kind", "source_id", "seq", name=op.f("uq_backfill_steps_source_kind_source_id_seq")),
    )
    op.create_index(op.f("ix_backfill_steps_org_id"), "backfill_steps", ["org_id"], unique=False)
    op.add_column("aws_backfills", sa.Column("window_end_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("aws_backfills", "window_end_at")
    op.drop_index(op.f("ix_backfill_steps_org_id"), table_name="backfill_steps")
    op.drop_table("backfill_steps")
