"""The fleet tests' clock (a module of its own: `conftest` names clash across test folders)."""

from __future__ import annotations

import datetime as dt

END = dt.datetime(2026, 11, 2, 18, 0, tzinfo=dt.UTC)
