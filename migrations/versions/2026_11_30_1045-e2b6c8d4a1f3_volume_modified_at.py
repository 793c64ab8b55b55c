"""volumes.modified_at: when a Headroom apply run last changed the volume's type, IOPS or throughput (the values
AWS read back, written on the row at once rather than at the next inventory sweep). The demo simulates a volume
from it: it has no AWS account whose sweep would report the change.

Revision ID: e2b6c8d4a1f3
Revises: d5e1a7c3b9f2
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "e2b6c8d4a1f3"
down_revision: str | None = "d5e1a7c3b9f2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("volumes", sa.Column("modified_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("volumes", "modified_at")
