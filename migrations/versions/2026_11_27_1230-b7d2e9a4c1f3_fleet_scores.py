"""Stored fleet scores: the fleet.score job writes each cluster's headroom score every 15 minutes, so the fleet
page reads a row per cluster instead of every cluster's series (the load test in docs/scaling.md).

Revision ID: b7d2e9a4c1f3
Revises: 7a3e5c1d9b24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "b7d2e9a4c1f3"
down_revision: str | None = "7a3e5c1d9b24"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "fleet_scores",
        sa.Column("cluster_id", sa.Uuid(), sa.ForeignKey("clusters.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("org_id", sa.Uuid(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False),
        sa.Column("window_end", sa.DateTime(timezone=True), nullable=False),
        sa.Column("headroom_score", sa.Integer(), nullable=True),
        sa.Column("tightest", postgresql.JSONB(), nullable=True),
    )
    op.create_index("ix_fleet_scores_org_id", "fleet_scores", ["org_id"])


def downgrade() -> None:
    op.drop_index("ix_fleet_scores_org_id", table_name="fleet_scores")
    op.drop_table("fleet_scores")
