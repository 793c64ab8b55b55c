"""Numbers in the words people read them in, shared by the advisor's findings and the alerts (pure)."""

from __future__ import annotations

from headroom.domain.units import format_duration_words


def duration_text(seconds: float) -> str:
    """Write a duration as people read it: "1 h 48 min", "35 min", "2 d 4 h" (units.format_duration_words, the one
    rule every surface uses: minutes rounded half up)."""
    return format_duration_words(seconds)
