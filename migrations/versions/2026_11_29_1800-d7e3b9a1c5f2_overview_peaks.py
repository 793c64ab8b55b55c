"""Each cluster's stored 7-day overview peaks (headroom.metrics.models.StoredOverviewPeaks): computed every 15
minutes by the fleet.score job, read by the cluster overview's 7-day range.

Revision ID: d7e3b9a1c5f2
Revises: c4a8e2f1d6b9
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "d7e3b9a1c5f2"
down_revision: str | None = "c4a8e2f1d6b9"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "overview_peaks",
        sa.Column("cluster_id", sa.Uuid(), sa.ForeignKey("clusters.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("org_id", sa.Uuid(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False),
        sa.Column("window_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("window_end", sa.DateTime(timezone=True), nullable=False),
        sa.Column("resolution_seconds", sa.Integer(), nullable=False),
        sa.Column("cells", postgresql.JSONB(), nullable=False),
    )
    op.create_index("ix_overview_peaks_org_id", "overview_peaks", ["org_id"])


def downgrade() -> None:
    op.drop_index("ix_overview_peaks_org_id", table_name="overview_peaks")
    op.drop_table("overview_peaks")
