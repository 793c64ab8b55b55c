"""metric_series keyed by cluster for node series; rollup dirty queue

Revision ID: 7c41e2a9d5b3
Revises: 5df92e3a8f84
Create Date: 2026-11-22 05:00:00+00:00

- metric_series: the single unique key (org, kind, entity, metric, labels) let two clusters of one org that reuse
  a store address share a node's series. Node and cluster series are now unique per cluster (NULLS NOT DISTINCT,
  PostgreSQL 15+); instance and volume series (AWS ids are globally unique) stay unique per org.
- metric_rollup_dirty: the (series, day) pairs whose rollups are stale, written with the points and drained by
  the timeseries.rollups job (rollups off the ingest write path).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "7c41e2a9d5b3"
down_revision: str | None = "5df92e3a8f84"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ["org_id", "entity_kind", "entity_id", "metric", "labels"]


def upgrade() -> None:
    op.create_index(
        "uq_metric_series_cluster_scoped", "metric_series", ["org_id", "cluster_id", "entity_kind", "entity_id",
                                                             "metric", "labels"],
        unique=True, postgresql_nulls_not_distinct=True,
        postgresql_where=sa.text("entity_kind IN ('cluster', 'tikv_node')"),
    )
    op.create_index(
        "uq_metric_series_org_scoped", "metric_series", COLUMNS, unique=True,
        postgresql_where=sa.text("entity_kind IN ('instance', 'volume')"),
    )
    op.drop_constraint(
        "uq_metric_series_org_id_entity_kind_entity_id_metric_labels", "metric_series", type_="unique"
    )
    op.create_table(
        "metric_rollup_dirty",
        sa.Column("series_id", sa.BigInteger(), nullable=False),
        sa.Column("day_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("marked_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["series_id"], ["metric_series.id"],
                                name=op.f("fk_metric_rollup_dirty_series_id_metric_series"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("series_id", "day_at", name=op.f("pk_metric_rollup_dirty")),
    )
    # Rollups of points already stored are current (the old write path recomputed them inline): nothing to queue.


def downgrade() -> None:
    # Drain first: the old write path keeps rollups current by itself and has no queue to read.
    op.drop_table("metric_rollup_dirty")
    # Fails (as it should) if two clusters now hold the same node series; merge or delete them first.
    op.create_unique_constraint(
        "uq_metric_series_org_id_entity_kind_entity_id_metric_labels", "metric_series", COLUMNS
    )
    op.drop_index("uq_metric_series_org_scoped", table_name="metric_series")
    op.drop_index("uq_metric_series_cluster_scoped", table_name="metric_series")
