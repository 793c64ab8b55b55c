"""The projection tests' window (a module of its own: `conftest` names clash across test folders)."""

from __future__ import annotations

import datetime as dt

# The demo scenario's afternoon (as the advice tests use): its hot node pins its gp3 volume's IOPS.
END = dt.datetime(2026, 11, 2, 18, 0, tzinfo=dt.UTC)
HOURS = 76  # three days and a bit: three daily cycles (ets-daily), inside a four-week history window
