"""Prometheus sources' Grafana URL: each node links to its TiKV-Details dashboard there.

Revision ID: 7a3e5c1d9b24
Revises: 4f1c2b8d6e90
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "7a3e5c1d9b24"
down_revision: str | None = "4f1c2b8d6e90"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("prometheus_sources", sa.Column("grafana_url", sa.String(length=2048), nullable=True))


def downgrade() -> None:
    op.drop_column("prometheus_sources", "grafana_url")
