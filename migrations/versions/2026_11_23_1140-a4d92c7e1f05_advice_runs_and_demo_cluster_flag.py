"""advice_runs (one queued or running on-demand advice run per cluster) and clusters.is_demo (the demo cluster
is identified by a flag that only demo seeding sets, not by a tag its users can edit).

The demo flag is set on each org's oldest cluster tagged `headroom.demo: "true"` (how seeding found it until
now); a later cluster carrying the same tag stays an ordinary cluster, so the one-per-org index can be built.

Revision ID: a4d92c7e1f05
Revises: 4d1c0b7e9a21
Create Date: 2026-11-23 11:40:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "a4d92c7e1f05"
down_revision: str | None = "4d1c0b7e9a21"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("clusters", sa.Column("is_demo", sa.Boolean(), server_default=sa.text("false"), nullable=False))
    op.execute(
        """
        UPDATE clusters SET is_demo = true
        WHERE id IN (
            SELECT DISTINCT ON (org_id) id FROM clusters
            WHERE tags ->> 'headroom.demo' = 'true'
            ORDER BY org_id, created_at, id
        )
        """
    )
    op.create_index(
        "uq_clusters_demo_per_org", "clusters", ["org_id"], unique=True, postgresql_where=sa.text("is_demo")
    )
    op.create_table(
        "advice_runs",
        sa.Column("cluster_id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("task_id", sa.String(length=200), nullable=False),
        sa.Column("requested_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["cluster_id"], ["clusters.id"], name=op.f("fk_advice_runs_cluster_id_clusters"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["org_id"], ["organizations.id"], name=op.f("fk_advice_runs_org_id_organizations"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("cluster_id", name=op.f("pk_advice_runs")),
    )
    op.create_index(op.f("ix_advice_runs_org_id"), "advice_runs", ["org_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_advice_runs_org_id"), table_name="advice_runs")
    op.drop_table("advice_runs")
    op.drop_index("uq_clusters_demo_per_org", table_name="clusters", postgresql_where=sa.text("is_demo"))
    # The tag the demo cluster was found by before this revision: put it back where a user removed it.
    op.execute(
        """
        UPDATE clusters SET tags = tags || '{"headroom.demo": "true"}'::jsonb
        WHERE is_demo AND (tags ->> 'headroom.demo') IS DISTINCT FROM 'true'
        """
    )
    op.drop_column("clusters", "is_demo")
