"""metric_rollup_dirty holds one row per series and run of consecutive hours (first_hour_at and `hours`) instead
of one per (series, hour): a backfill of 8 days queues one row per series instead of 192, which cost the server
about as much as the points rows themselves. The rollups job expands a run into its hours when it claims it.

Revision ID: d5e1a7c3b9f2
Revises: d7e3b9a1c5f2
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "d5e1a7c3b9f2"
down_revision: str | None = "d7e3b9a1c5f2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.alter_column("metric_rollup_dirty", "hour_at", new_column_name="first_hour_at")
    # Every queued (series, hour) is a run of one hour; then consecutive hours of a series join into one run.
    op.add_column("metric_rollup_dirty", sa.Column("hours", sa.Integer(), server_default="1", nullable=False))
    op.alter_column("metric_rollup_dirty", "hours", server_default=None)
    op.create_check_constraint(op.f("ck_metric_rollup_dirty_hours_positive"), "metric_rollup_dirty", "hours >= 1")
    # Gaps and islands: hours minus their rank within the series are equal along a run of consecutive hours.
    op.execute(
        "WITH islands AS (SELECT series_id, first_hour_at, first_hour_at - row_number() OVER "
        "(PARTITION BY series_id ORDER BY first_hour_at) * interval '1 hour' AS island FROM metric_rollup_dirty), "
        "runs AS (SELECT series_id, min(first_hour_at) AS first_hour_at, count(*) AS hours FROM islands "
        "GROUP BY series_id, island HAVING count(*) > 1) "
        "UPDATE metric_rollup_dirty d SET hours = r.hours FROM runs r "
        "WHERE d.series_id = r.series_id AND d.first_hour_at = r.first_hour_at"
    )
    op.execute(
        "DELETE FROM metric_rollup_dirty d WHERE EXISTS (SELECT 1 FROM metric_rollup_dirty r "
        "WHERE r.series_id = d.series_id AND r.first_hour_at < d.first_hour_at "
        "AND r.first_hour_at + r.hours * interval '1 hour' > d.first_hour_at)"
    )


def downgrade() -> None:
    # Each run queues its hours one by one again, as the per-hour queue holds them.
    op.execute(
        "INSERT INTO metric_rollup_dirty (series_id, first_hour_at, hours, org_id, marked_at) "
        "SELECT d.series_id, d.first_hour_at + h * interval '1 hour', 1, d.org_id, d.marked_at "
        "FROM metric_rollup_dirty d CROSS JOIN LATERAL generate_series(1, d.hours - 1) AS h ON CONFLICT DO NOTHING"
    )
    op.drop_constraint(op.f("ck_metric_rollup_dirty_hours_positive"), "metric_rollup_dirty", type_="check")
    op.drop_column("metric_rollup_dirty", "hours")
    op.alter_column("metric_rollup_dirty", "first_hour_at", new_column_name="hour_at")
