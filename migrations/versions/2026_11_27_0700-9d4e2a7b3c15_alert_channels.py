"""Alert channels: where an organisation's alerts go, and one delivery record per event and channel.

Revision ID: 9d4e2a7b3c15
Revises: 7c3d5e9a1b08
Create Date: 2026-11-27 07:00:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "9d4e2a7b3c15"
down_revision: str | None = "7c3d5e9a1b08"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "alert_channels",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("kind", sa.Enum("slack", "webhook", "pagerduty", "alertmanager", "email", name="alert_channel_kind",
                                  native_enum=False, create_constraint=True, length=32), nullable=False),
        sa.Column("url_enc", sa.Text(), nullable=False),
        sa.Column("url_hint", sa.String(length=200), nullable=False),
        sa.Column("secret_enc", sa.Text(), nullable=True),
        sa.Column("min_severity", sa.String(length=16), nullable=False),
        sa.Column("families", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("quiet_start_hour", sa.Integer(), nullable=True),
        sa.Column("quiet_end_hour", sa.Integer(), nullable=True),
        sa.Column("renotify_hours", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["org_id"], ["organizations.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_alert_channels_org_id"), "alert_channels", ["org_id"])
    op.create_table(
        "alert_deliveries",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("channel_id", sa.Uuid(), nullable=False),
        sa.Column("event_key", sa.String(length=300), nullable=False),
        sa.Column("event", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("status", sa.Enum("pending", "sending", "sent", "failed", name="alert_delivery_status",
                                    native_enum=False, create_constraint=True, length=32), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["channel_id"], ["alert_channels.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["org_id"], ["organizations.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("channel_id", "event_key"),
    )
    op.create_index(op.f("ix_alert_deliveries_channel_id"), "alert_deliveries", ["channel_id"])
    op.create_index(op.f("ix_alert_deliveries_org_id"), "alert_deliveries", ["org_id"])
    op.create_index("ix_alert_deliveries_due", "alert_deliveries", ["status", "next_attempt_at"])


def downgrade() -> None:
    op.drop_index("ix_alert_deliveries_due", table_name="alert_deliveries")
    op.drop_index(op.f("ix_alert_deliveries_org_id"), table_name="alert_deliveries")
    op.drop_index(op.f("ix_alert_deliveries_channel_id"), table_name="alert_deliveries")
    op.drop_table("alert_deliveries")
    op.drop_index(op.f("ix_alert_channels_org_id"), table_name="alert_channels")
    op.drop_table("alert_channels")
