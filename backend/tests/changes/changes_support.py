"""The change tests' hours (a module of its own: `conftest` names clash across test folders)."""

from __future__ import annotations

import datetime as dt

# The demo's afternoon: its hot node pins its gp3 data volume's IOPS and its hot nodes their volumes' throughput
# (the advice tests use the same hours).
CHANGE = dt.datetime(2026, 11, 2, 18, 0, tzinfo=dt.UTC)
WEEK = dt.timedelta(days=7)
LEDGER_AFTER = dt.timedelta(hours=6)
OUTCOME_AFTER = dt.timedelta(hours=26)  # more than the day an outcome waits for
