"""A stored projection keeps the ceiling it runs toward as one typed Ceiling (value, kind, label, source), as every
other surface shows it; rows fitted before keep only their number and source (null here) until the next daily fit.

Revision ID: c3e8a1f5d2b7
Revises: b7d2e9a4c1f3
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "c3e8a1f5d2b7"
down_revision: str | None = "b7d2e9a4c1f3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("projections", sa.Column("target", postgresql.JSONB(astext_type=sa.Text()), nullable=True))


def downgrade() -> None:
    op.drop_column("projections", "target")
