"""Fix outcomes (docs/changes.md, Outcomes): whether each applied fix did what its finding predicted, one row per
ledger entry and finding, for the rules page's per-rule accuracy.

Revision ID: c3d8a5e1f7b9
Revises: b7e4c1d9a2f6
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "c3d8a5e1f7b9"
down_revision: str | None = "b7e4c1d9a2f6"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

VERDICTS = ("held", "partly", "missed", "too_early", "not_measurable")


def upgrade() -> None:
    op.create_table(
        "fix_outcomes",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("cluster_id", sa.Uuid(), nullable=False),
        sa.Column("change_id", sa.String(120), nullable=False),
        sa.Column("finding_id", sa.Uuid(), nullable=False),
        sa.Column("rule", sa.String(64), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("verdict", sa.Enum(*VERDICTS, name="fix_outcome_verdict", native_enum=False, create_constraint=True,
                                     length=32), nullable=False),
        sa.Column("prediction", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("outcome", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("measured_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["org_id"], ["organizations.id"], name=op.f("fk_fix_outcomes_org_id_organizations"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["cluster_id"], ["clusters.id"], name=op.f("fk_fix_outcomes_cluster_id_clusters"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["finding_id"], ["findings.id"], name=op.f("fk_fix_outcomes_finding_id_findings"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fix_outcomes")),
        sa.UniqueConstraint("cluster_id", "change_id", "finding_id",
                            name=op.f("uq_fix_outcomes_cluster_id_change_id_finding_id")),
    )
    for column in ("org_id", "cluster_id", "finding_id", "rule"):
        op.create_index(op.f(f"ix_fix_outcomes_{column}"), "fix_outcomes", [column])


def downgrade() -> None:
    op.drop_table("fix_outcomes")
