"""Drop the first schema's digest_subscriptions and digests_sent: never used; the weekly email keeps its settings
and sends in digest_settings / digest_sends (store/models_digest.py, migration 8c5d3f42ce2a). The downgrade
recreates both tables exactly as the initial schema (993e3e3a4d0a) made them, empty.

Revision ID: 4d1c0b7e9a21
Revises: 3e7a91c4b2d6
Create Date: 2026-11-22 05:50:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "4d1c0b7e9a21"
down_revision: str | None = "3e7a91c4b2d6"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index(op.f("ix_digests_sent_org_id"), table_name="digests_sent")
    op.drop_table("digests_sent")
    op.drop_index(op.f("ix_digest_subscriptions_user_id"), table_name="digest_subscriptions")
    op.drop_index(op.f("ix_digest_subscriptions_org_id"), table_name="digest_subscriptions")
    op.drop_table("digest_subscriptions")


def downgrade() -> None:
    # As in 2026_11_22_0156-993e3e3a4d0a_initial_schema.py.
    op.create_table(
        "digest_subscriptions",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=True),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("enabled", sa.Boolean(), server_default=sa.text("true"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["org_id"], ["organizations.id"],
                                name=op.f("fk_digest_subscriptions_org_id_organizations"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_digest_subscriptions_user_id_users"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_digest_subscriptions")),
        sa.UniqueConstraint("org_id", "email", name=op.f("uq_digest_subscriptions_org_id_email")),
    )
    op.create_index(op.f("ix_digest_subscriptions_org_id"), "digest_subscriptions", ["org_id"], unique=False)
    op.create_index(op.f("ix_digest_subscriptions_user_id"), "digest_subscriptions", ["user_id"], unique=False)
    op.create_table(
        "digests_sent",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("week_start", sa.Date(), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("recipients", sa.Integer(), nullable=False),
        sa.Column("findings_count", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["org_id"], ["organizations.id"], name=op.f("fk_digests_sent_org_id_organizations"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_digests_sent")),
        sa.UniqueConstraint("org_id", "week_start", name=op.f("uq_digests_sent_org_id_week_start")),
    )
    op.create_index(op.f("ix_digests_sent_org_id"), "digests_sent", ["org_id"], unique=False)
