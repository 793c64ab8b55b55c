"""Snapshot and scenario errors, with the path of the bad field in the message."""

from __future__ import annotations

from pydantic import ValidationError


class SnapshotError(ValueError):
    """A snapshot could not be read, written or validated."""


class ScenarioError(ValueError):
    """A simulator scenario is malformed."""


def field_path(loc: tuple[int | str, ...]) -> str:
    """Render a pydantic error location as `nodes[1].volumes[0].size_gib`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(root)"


def describe_validation_error(exc: ValidationError, *, limit: int = 3) -> str:
    """Return a one-line description of a validation error: `path: reason; path: reason`."""
    parts = []
    for err in exc.errors()[:limit]:
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        parts.append(f"{field_path(loc)}: {err['msg'].removeprefix('Value error, ')}")
    more = len(exc.errors()) - limit
    if more > 0:
        parts.append(f"(and {more} more)")
    return "; ".join(parts)
