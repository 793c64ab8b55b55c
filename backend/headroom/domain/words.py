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


# What an audit log entry's subject is called (the part of its action before the dot).
AUDIT_SUBJECTS: dict[str, str] = {
    "api_token": "API token",
    "apply": "Apply",
    "auth": "Sign-in",
    "aws_connection": "AWS connection",
    "cluster": "Cluster",
    "digest": "Weekly email",
    "finding": "Finding",
    "member": "Member",
    "org": "Organisation",
    "patch": "Patch",
    "prometheus_source": "Prometheus source",
    "volume": "Volume",
}
# Whole actions whose words are not their parts' ("auth.login" is not "Sign-in: login").
AUDIT_ACTIONS: dict[str, str] = {
    "auth.login": "Signed in",
    "auth.signup_confirmed": "Sign-up confirmed",
    "org.created": "Organisation created",
    "volume.id_given": "Demo volume: given a real volume's ID",
}


def audit_action_text(action: str) -> str:
    """An audit log action in words ("apply.step_rolled_back" -> "Apply: step rolled back"); the code itself stays
    in the entry for filtering and scripts."""
    if action in AUDIT_ACTIONS:
        return AUDIT_ACTIONS[action]
    subject, _, what = action.partition(".")
    name = AUDIT_SUBJECTS.get(subject, subject.replace("_", " ").capitalize())
    return f"{name}: {what.replace('_', ' ')}" if what else name
