"""Names are limited by the characters a person sees (extended grapheme clusters), not code points: a name of
200 shown characters may take up to 800 code points (an emoji with a skin tone is two, a letter with a combining
accent two), so the name columns widen to 4 code points per shown character (platform/schemas.py Name200,
Name100). Widening a varchar is a catalogue change in PostgreSQL: no table rewrite.

Revision ID: e8a3c6f1b5d2
Revises: d4f7b2a9e6c1
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "e8a3c6f1b5d2"
down_revision: str | None = "d4f7b2a9e6c1"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = (
    ("clusters", "name", 200), ("aws_connections", "name", 200), ("prometheus_sources", "name", 200),
    ("organizations", "name", 200), ("users", "full_name", 200), ("api_tokens", "name", 200),
    ("alert_channels", "name", 100),
)


def upgrade() -> None:
    for table, column, shown in COLUMNS:
        op.alter_column(table, column, type_=sa.String(shown * 4), existing_type=sa.String(shown),
                        existing_nullable=False)


def downgrade() -> None:
    for table, column, shown in COLUMNS:
        op.alter_column(table, column, type_=sa.String(shown), existing_type=sa.String(shown * 4),
                        existing_nullable=False)
