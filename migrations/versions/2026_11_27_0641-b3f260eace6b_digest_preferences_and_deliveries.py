"""Digest preferences and deliveries: each member's weekly-email choices per organisation (on/off,
which clusters, when they unsubscribed), and one row per recipient a week's send reached, so a retried send
skips those already delivered.

Revision ID: b3f260eace6b
Revises: 9d4e2a7b3c15
Create Date: 2026-11-27 06:41:45.171671+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b3f260eace6b"
down_revision: str | None = "9d4e2a7b3c15"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "digest_preferences",
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("weekly_email", sa.Boolean(), server_default=sa.text("true"), nullable=False),
        sa.Column("cluster_ids", sa.ARRAY(sa.Uuid()), nullable=True),
        sa.Column("unsubscribed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["org_id"],
            ["organizations.id"],
            name=op.f("fk_digest_preferences_org_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_digest_preferences_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("user_id", "org_id", name=op.f("pk_digest_preferences")),
    )
    op.create_index(op.f("ix_digest_preferences_org_id"), "digest_preferences", ["org_id"], unique=False)
    op.create_table(
        "digest_deliveries",
        sa.Column("send_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column(
            "delivered_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["org_id"],
            ["organizations.id"],
            name=op.f("fk_digest_deliveries_org_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["send_id"],
            ["digest_sends.id"],
            name=op.f("fk_digest_deliveries_send_id_digest_sends"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_digest_deliveries_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("send_id", "user_id", name=op.f("pk_digest_deliveries")),
    )
    op.create_index(op.f("ix_digest_deliveries_org_id"), "digest_deliveries", ["org_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_digest_deliveries_org_id"), table_name="digest_deliveries")
    op.drop_table("digest_deliveries")
    op.drop_index(op.f("ix_digest_preferences_org_id"), table_name="digest_preferences")
    op.drop_table("digest_preferences")
