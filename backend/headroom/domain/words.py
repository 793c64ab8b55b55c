"""Numbers in the words people read them in, shared by the advisor's findings and the alerts (pure)."""

from __future__ import annotations

from headroom.domain.units import format_duration_words


def duration_text(seconds: float) -> str:
    """Write a duration as people read it: "1 h 48 min", "35 min", "2 d 4 h" (units.format_duration_words, the one
    rule every surface uses: minutes rounded half up)."""
    return format_duration_words(seconds)


# Each method in words, for a reader who never sees the method's code (headroom.domain.forecast.growth fits them).
METHOD_WORDS: dict[str, str] = {
    "ets-weekly": "weekly seasonal trend",
    "ets-daily": "daily seasonal trend",
    "holt": "trend",
    "theil-sen": "robust line (short history)",
    "constant": "flat",
}


def method_words(method: str) -> str:
    """Say how a projection was made ("forecast: weekly seasonal trend"), never the method's code."""
    return f"forecast: {METHOD_WORDS.get(method, 'trend')}"
