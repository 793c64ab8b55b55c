"""organizations.lookback_days and clusters.lookback_days: the days of history a cut is judged on (AWS Compute
Optimizer's look-back period: 14 by default, 32 or 93; docs/reference/lookback.md). A cluster's null inherits
its organisation's.

Revision ID: a6c3e9d2f4b8
Revises: f2b7d9c4a1e6
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "a6c3e9d2f4b8"
down_revision: str | None = "f2b7d9c4a1e6"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("organizations", sa.Column("lookback_days", sa.SmallInteger(), server_default="14", nullable=False))
    op.create_check_constraint("lookback_days", "organizations", "lookback_days IN (14, 32, 93)")
    op.add_column("clusters", sa.Column("lookback_days", sa.SmallInteger(), nullable=True))
    op.create_check_constraint("lookback_days", "clusters", "lookback_days IS NULL OR lookback_days IN (14, 32, 93)")


def downgrade() -> None:
    op.drop_constraint("lookback_days", "clusters", type_="check")
    op.drop_column("clusters", "lookback_days")
    op.drop_constraint("lookback_days", "organizations", type_="check")
    op.drop_column("organizations", "lookback_days")
