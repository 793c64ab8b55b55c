"""metric_rollup_dirty marks (series, hour) instead of (series, day): the rollups job recomputes only the buckets
of the hours a write changed (an hour's raw row holds its twelve 5-minute buckets and its hourly bucket whole),
not the whole day.

Revision ID: 5e2c8b1d7f43
Revises: a6c3e9d2f4b8
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "5e2c8b1d7f43"
down_revision: str | None = "a6c3e9d2f4b8"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.alter_column("metric_rollup_dirty", "day_at", new_column_name="hour_at")
    # A queued day becomes its 24 hours (its midnight is already the first of them), so nothing queued is lost.
    op.execute(
        "INSERT INTO metric_rollup_dirty (series_id, hour_at, org_id, marked_at) "
        "SELECT d.series_id, d.hour_at + h * interval '1 hour', d.org_id, d.marked_at "
        "FROM metric_rollup_dirty d CROSS JOIN generate_series(1, 23) AS h ON CONFLICT DO NOTHING"
    )


def downgrade() -> None:
    # Each queued hour queues its whole day again (the day's midnight), as the per-day queue recomputes days.
    op.execute(
        "INSERT INTO metric_rollup_dirty (series_id, hour_at, org_id, marked_at) "
        "SELECT series_id, date_trunc('day', hour_at, 'UTC'), org_id, max(marked_at) FROM metric_rollup_dirty "
        "GROUP BY series_id, date_trunc('day', hour_at, 'UTC'), org_id ON CONFLICT DO NOTHING"
    )
    op.execute("DELETE FROM metric_rollup_dirty WHERE hour_at <> date_trunc('day', hour_at, 'UTC')")
    op.alter_column("metric_rollup_dirty", "hour_at", new_column_name="day_at")
