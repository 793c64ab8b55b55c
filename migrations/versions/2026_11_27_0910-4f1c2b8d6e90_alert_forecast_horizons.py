"""Alert channels' forecast horizons: alert when a burst bucket empties within N hours or a ceiling is reached
within N days.

Revision ID: 4f1c2b8d6e90
Revises: e61c0a4f7d93
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "4f1c2b8d6e90"
down_revision: str | None = "e61c0a4f7d93"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("alert_channels", sa.Column("burst_horizon_hours", sa.Integer(), nullable=True))
    op.add_column("alert_channels", sa.Column("ceiling_horizon_days", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column("alert_channels", "ceiling_horizon_days")
    op.drop_column("alert_channels", "burst_horizon_hours")
