"""aws_connections.is_demo: the demo organisation's example AWS source (its test, sweeps and import are the
simulator's; nothing of it reaches AWS), at most one per organisation.

Revision ID: e61c0a4f7d93
Revises: b3f260eace6b
Create Date: 2026-11-27 09:00:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "e61c0a4f7d93"
down_revision: str | None = "b3f260eace6b"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("aws_connections", sa.Column("is_demo", sa.Boolean(), server_default=sa.text("false"),
                                               nullable=False))
    op.create_index("uq_aws_connections_demo_per_org", "aws_connections", ["org_id"], unique=True,
                    postgresql_where=sa.text("is_demo"))


def downgrade() -> None:
    # The demo sources go with the flag: without it they would be swept against AWS like any connection.
    op.execute("DELETE FROM aws_connections WHERE is_demo")
    op.drop_index("uq_aws_connections_demo_per_org", table_name="aws_connections",
                  postgresql_where=sa.text("is_demo"))
    op.drop_column("aws_connections", "is_demo")
