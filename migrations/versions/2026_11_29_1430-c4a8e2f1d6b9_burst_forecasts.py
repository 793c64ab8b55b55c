"""Each cluster's stored burst forecasts (headroom.metrics.models.StoredBurstForecasts): computed once per advice
round by the fleet.score job, read by every surface that shows a bucket's time to empty.

Revision ID: c4a8e2f1d6b9
Revises: c3d8e2a7b915
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "c4a8e2f1d6b9"
down_revision: str | None = "c3d8e2a7b915"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "burst_forecasts",
        sa.Column("cluster_id", sa.Uuid(), sa.ForeignKey("clusters.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("org_id", sa.Uuid(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("forecasts", postgresql.JSONB(), nullable=False),
        sa.Column("paths", postgresql.JSONB(), nullable=False),
    )
    op.create_index("ix_burst_forecasts_org_id", "burst_forecasts", ["org_id"])


def downgrade() -> None:
    op.drop_index("ix_burst_forecasts_org_id", table_name="burst_forecasts")
    op.drop_table("burst_forecasts")
