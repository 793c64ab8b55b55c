"""clusters.advised_at: when the advisor last ran over the cluster's data. Null: never yet, so the pages say the
first analysis is running instead of showing a cluster with no findings, no savings and no ceiling. A cluster
with findings was advised at least when its newest finding was last seen; one without findings is advised again
by the next scheduled round (every 15 minutes).

Revision ID: f2b7d9c4a1e6
Revises: e8a3c6f1b5d2
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "f2b7d9c4a1e6"
down_revision: str | None = "e8a3c6f1b5d2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("clusters", sa.Column("advised_at", sa.DateTime(timezone=True), nullable=True))
    op.execute(
        "UPDATE clusters SET advised_at = f.seen FROM "
        "(SELECT cluster_id, max(last_seen_at) AS seen FROM findings GROUP BY cluster_id) AS f "
        "WHERE f.cluster_id = clusters.id"
    )


def downgrade() -> None:
    op.drop_column("clusters", "advised_at")
