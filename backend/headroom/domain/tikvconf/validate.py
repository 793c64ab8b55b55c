"""Check a whole tikv.toml against TiKV's keys and their kinds: what an upload may become a node's config.

A value of the wrong kind (`capacity = "lots"`, `max-background-jobs = -3`) is a problem naming the key, its line
and what is allowed; a key TiKV's template and test config do not have is a warning, not a refusal (a newer TiKV
may have it). Kinds come from TiKV's config template (keys.py): sizes, durations, whole numbers, booleans.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from headroom.domain.tikvconf.errors import InvalidChangeValue
from headroom.domain.tikvconf.keys import check_value, is_valid_key
from headroom.domain.tikvconf.parse import flatten

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_ASSIGN = re.compile(r"^\s*((?:[A-Za-z0-9_\-]+|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_\-]+|\"[^\"]*\"|'[^']*'))*)\s*=")


@dataclass(frozen=True)
class ValueProblem:
    key: str
    line: int | None
    message: str


@dataclass(frozen=True)
class ConfigCheck:
    problems: tuple[ValueProblem, ...]
    unknown_keys: tuple[str, ...]


def _parts(dotted: str) -> list[str]:
    return [p.strip().strip("\"'") for p in re.findall(r"\"[^\"]*\"|'[^']*'|[^.]+", dotted)]


def key_lines(text: str) -> dict[str, int]:
    """Map each dotted key assigned in a TOML text to its line (1-based); inline tables count as their key."""
    lines: dict[str, int] = {}
    section: list[str] = []
    # TOML ends lines at LF (CRLF too) only: str.splitlines() would also break at U+2028 and friends, which a
    # comment may hold, and number every later line wrong.
    for number, raw in enumerate(text.split("\n"), start=1):
        raw = raw.removesuffix("\r")
        if raw.lstrip().startswith("#"):
            continue
        header = _HEADER.match(raw)
        if header:
            section = _parts(header.group(1))
            continue
        assign = _ASSIGN.match(raw)
        if assign:
            lines.setdefault(".".join([*section, *_parts(assign.group(1))]), number)
    return lines


def check_config(config: Mapping[str, Any], text: str | None = None) -> ConfigCheck:
    """Check every key of a nested config: values of the wrong kind are problems, unknown keys warnings."""
    where = key_lines(text) if text is not None else {}
    problems: list[ValueProblem] = []
    unknown: list[str] = []
    for key, value in flatten(config).items():
        if not is_valid_key(key):
            unknown.append(key)
            continue
        try:
            check_value(key, value)
        except InvalidChangeValue as error:
            line = where.get(key) or next((n for k, n in where.items() if key.startswith(k + ".")), None)
            problems.append(ValueProblem(key, line, str(error)))
    return ConfigCheck(tuple(problems), tuple(unknown))
