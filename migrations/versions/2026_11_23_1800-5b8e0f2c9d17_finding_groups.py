"""Findings that share a cause are linked: each finding stores its group.

findings.group_id: the group's stable id (derived from its members' dedup keys; null: the finding stands
alone), indexed with the cluster so a finding's related findings are one lookup. findings.finding_group: the
group as the advisor made it (headroom.domain.model.FindingGroup: primary, fix, members, related, resolves,
remaining, summary), its keys being the stored dedup keys. Existing rows have no group until the next advice run.

Revision ID: 5b8e0f2c9d17
Revises: c81f3a6d2b47
Create Date: 2026-11-23 18:00:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "5b8e0f2c9d17"
down_revision: str | None = "c81f3a6d2b47"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("findings", sa.Column("group_id", sa.String(length=40), nullable=True))
    op.add_column(
        "findings", sa.Column("finding_group", postgresql.JSONB(astext_type=sa.Text()), nullable=True)
    )
    op.create_index("ix_findings_org_cluster_group", "findings", ["org_id", "cluster_id", "group_id"])


def downgrade() -> None:
    op.drop_index("ix_findings_org_cluster_group", table_name="findings")
    op.drop_column("findings", "finding_group")
    op.drop_column("findings", "group_id")
