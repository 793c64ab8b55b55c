"""What a user must never read (docs/jargon.json: one list for the backend's scans and the end-to-end crawl)."""

from __future__ import annotations

import json
import re
from pathlib import Path

_TABLE = json.loads((Path(__file__).resolve().parents[2] / "docs" / "jargon.json").read_text(encoding="utf-8"))
JARGON: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (entry["what"], re.compile(entry["pattern"])) for entry in _TABLE["patterns"]
)


def jargon_in(text: str) -> list[str]:
    """Each piece of jargon in `text`, as "<what>: <match>"."""
    return [f"{what}: {m.group(0)}" for what, pattern in JARGON for m in pattern.finditer(text)]
