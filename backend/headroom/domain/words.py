"""Numbers in the words people read them in, shared by the advisor's findings and the alerts (pure)."""

from __future__ import annotations


def duration_text(seconds: float) -> str:
    """Write a duration as people read it: "1 h 48 min", "35 min"."""
    minutes_total = int(round(seconds / 60.0))
    hours, mins = divmod(minutes_total, 60)
    if hours and mins:
        return f"{hours} h {mins} min"
    if hours:
        return f"{hours} h"
    return f"{mins} min"
