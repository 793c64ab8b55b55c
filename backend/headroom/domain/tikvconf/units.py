"""Sizes and durations written the way TiKV writes them, parsed the way TiKV parses them.

Sources (tikv/tikv `components/tikv_util/src/config.rs`, `ReadableSize` / `ReadableDuration`):
- `ReadableSize::from_str` maps "K" | "KB" | "KiB" to 1024, "M" | "MB" | "MiB" to 1024^2, and so on up to P;
  "B" or
  no unit is bytes; the number may be fractional. Units are case-sensitive ("kb" is rejected). So `KB` is
  1024,
  not 1000; the template's header says the same: "File size(based on byte, binary units): KB, MB, GB, TB, PB
  e.g.: 1_048_576 = \"1MB\"". A plain TOML integer is bytes (`visit_u64`).
- `ReadableSize` serializes as the largest exact binary unit ("32KiB", "256MiB", "0KiB" for zero) and as a
  bare
  integer when not a whole number of KiB; that is what `GET /config` prints (domain.md section 4.2).
- `ReadableDuration::from_str` accepts d, h, m, s, ms in that order ("1h30m", "500ms", "1.3m"); it displays as
  "1h30m", "0s" for zero. The test-custom.toml of the same tree also writes "444us", so "us" is accepted too.
"""

from __future__ import annotations

import math
import re

from headroom.domain.tikvconf.errors import InvalidChangeValue

KIB = 1024
_SIZE_UNITS: dict[str, int] = {
    "": 1,
    "B": 1,
    "K": KIB,
    "KB": KIB,
    "KiB": KIB,
    "M": KIB**2,
    "MB": KIB**2,
    "MiB": KIB**2,
    "G": KIB**3,
    "GB": KIB**3,
    "GiB": KIB**3,
    "T": KIB**4,
    "TB": KIB**4,
    "TiB": KIB**4,
    "P": KIB**5,
    "PB": KIB**5,
    "PiB": KIB**5,
}
_SIZE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]*)\s*$")

MS = 1
SECOND = 1000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR
_DURATION_UNITS: dict[str, float] = {"d": DAY, "h": HOUR, "m": MINUTE, "s": SECOND, "ms": MS, "us": 0.001}
_DURATION_PART_RE = re.compile(r"([0-9]+(?:\.[0-9]*)?)(ms|us|d|h|m|s)")


def is_size_text(text: str) -> bool:
    """Say whether `text` parses as a TiKV ReadableSize string."""
    match = _SIZE_RE.match(text)
    return bool(match) and match is not None and match.group(2) in _SIZE_UNITS


def parse_size(value: str | int) -> int:
    """Return the number of bytes in a TiKV size ("4GiB", "32KB", "8M", 1048576)."""
    if isinstance(value, bool):
        raise InvalidChangeValue(f"{value!r} is not a size")
    if isinstance(value, int):
        if value < 0:
            raise InvalidChangeValue(f"{value!r} is not a size: sizes are never negative")
        return value
    match = _SIZE_RE.match(value)
    if not match or match.group(2) not in _SIZE_UNITS:
        raise InvalidChangeValue(
            f"{value!r} is not a TiKV size: use B, KB, KiB, MB, MiB, GB, GiB, TB, TiB (binary: KB = 1024)"
        )
    return int(float(match.group(1)) * _SIZE_UNITS[match.group(2)])


def format_size(size_bytes: int) -> str | int:
    """Write bytes as TiKV serializes them: the largest exact binary unit, else a bare integer."""
    if size_bytes < 0:
        raise InvalidChangeValue(f"{size_bytes} is not a size: sizes are never negative")
    if size_bytes == 0:
        return "0KiB"
    for unit in ("PiB", "TiB", "GiB", "MiB", "KiB"):
        factor = _SIZE_UNITS[unit]
        if size_bytes % factor == 0:
            return f"{size_bytes // factor}{unit}"
    return size_bytes


def is_duration_text(text: str) -> bool:
    """Say whether `text` parses as a TiKV ReadableDuration string."""
    try:
        parse_duration(text)
    except InvalidChangeValue:
        return False
    return True


def parse_duration(text: str) -> float:
    """Return the milliseconds in a TiKV duration ("1h", "10m", "500ms", "1h30m", "1.3m", "444us")."""
    stripped = text.strip()
    if not stripped:
        raise InvalidChangeValue(f"{text!r} is not a TiKV duration")
    position = 0
    total = 0.0
    last_unit: float = DAY + 1
    for match in _DURATION_PART_RE.finditer(stripped):
        if match.start() != position:
            break
        unit = _DURATION_UNITS[match.group(2)]
        if unit >= last_unit:
            raise InvalidChangeValue(f"{text!r}: d, h, m, s, ms must appear in that order")
        total += float(match.group(1)) * unit
        last_unit = unit
        position = match.end()
    if position != len(stripped):
        raise InvalidChangeValue(f"{text!r} is not a TiKV duration: only d, h, m, s, ms are supported")
    return total


def format_duration(milliseconds: int) -> str:
    """Write milliseconds as TiKV displays a duration ("1h30m", "500ms", "0s")."""
    if milliseconds < 0:
        raise InvalidChangeValue(f"{milliseconds} is not a duration: durations are never negative")
    remaining = milliseconds
    parts: list[str] = []
    for suffix, factor in (("d", DAY), ("h", HOUR), ("m", MINUTE), ("s", SECOND)):
        if remaining >= factor:
            parts.append(f"{remaining // factor}{suffix}")
            remaining %= factor
    if remaining:
        parts.append(f"{remaining}ms")
    return "".join(parts) or "0s"


def gib(count: float) -> int:
    """Return `count` GiB in bytes (rounded down, as TiKV's `as u64` casts do)."""
    return math.floor(count * KIB**3)
