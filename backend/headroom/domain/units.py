"""Sizes, durations and rates: one parser and one formatter for each, used by every part of Headroom.

TiKV sizes and durations are written the way TiKV writes them and parsed the way TiKV parses them
(tikv/tikv `components/tikv_util/src/config.rs`, `ReadableSize` / `ReadableDuration`):
- `ReadableSize::from_str` maps "K" | "KB" | "KiB" to 1024, "M" | "MB" | "MiB" to 1024^2, and so on up to P;
  "B" or no unit is bytes; the number may be fractional. Units are case-sensitive: TiKV rejects "kb", "0.5kB",
  "0.5g" (its `test_parse_readable_size` illegal cases), and so does this module, so a value Headroom accepts
  is one TiKV accepts. `KB` is 1024, not 1000; the config template's header says the same: "File size(based on
  byte, binary units): KB, MB, GB, TB, PB e.g.: 1_048_576 = \"1MB\"". A plain TOML integer is bytes
  (`visit_u64`).
- `ReadableSize` serializes as the largest exact binary unit ("32KiB", "256MiB", "0KiB" for zero) and as a bare
  integer when not a whole number of KiB; that is what `GET /config` prints (docs/reference/tikv-metrics.md#config-json).
- `ReadableDuration::from_str` accepts d, h, m, s, ms in that order ("1h30m", "500ms", "1.3m"); it displays as
  "1h30m", "0s" for zero. The test-custom.toml of the same tree also writes "444us", so "us" is accepted too.

AWS rates: instance EBS throughput is quoted in MB/s (decimal, = Mbps / 8) and volume throughput in MiB/s
(binary) (docs/reference/ec2-ebs-limits.md#units: "Throughput is in MB/s = Mbps ÷ 8, decimal"; "EBS volume limits are in MiB/s:
593.75 MB/s ≈ 566 MiB/s"). Every conversion between the two goes through this module.
"""

from __future__ import annotations

import math
import re


class UnitError(ValueError):
    """A size or duration that TiKV would not accept; the message says what is wrong."""


KIB = 1024
MIB = KIB**2
GIB = KIB**3
TIB = KIB**4
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
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise UnitError(f"{value!r} is not a size")
    if isinstance(value, int):
        if value < 0:
            raise UnitError(f"{value!r} is not a size: sizes are never negative")
        return value
    match = _SIZE_RE.match(value)
    if not match or match.group(2) not in _SIZE_UNITS:
        raise UnitError(
            f"{value!r} is not a TiKV size: use B, KB, KiB, MB, MiB, GB, GiB, TB, TiB (binary: KB = 1024)"
        )
    return int(float(match.group(1)) * _SIZE_UNITS[match.group(2)])


def format_size(size_bytes: int) -> str | int:
    """Write bytes as TiKV serializes them: the largest exact binary unit, else a bare integer."""
    if size_bytes < 0:
        raise UnitError(f"{size_bytes} is not a size: sizes are never negative")
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
    except UnitError:
        return False
    return True


def parse_duration(text: str) -> float:
    """Return the milliseconds in a TiKV duration ("1h", "10m", "500ms", "1h30m", "1.3m", "444us")."""
    stripped = text.strip()
    if not stripped:
        raise UnitError(f"{text!r} is not a TiKV duration")
    position = 0
    total = 0.0
    last_unit: float = DAY + 1
    for match in _DURATION_PART_RE.finditer(stripped):
        if match.start() != position:
            break
        unit = _DURATION_UNITS[match.group(2)]
        if unit >= last_unit:
            raise UnitError(f"{text!r}: d, h, m, s, ms must appear in that order")
        total += float(match.group(1)) * unit
        last_unit = unit
        position = match.end()
    if position != len(stripped):
        raise UnitError(f"{text!r} is not a TiKV duration: only d, h, m, s, ms are supported")
    return total


def format_duration(milliseconds: int) -> str:
    """Write milliseconds as TiKV displays a duration ("1h30m", "500ms", "0s")."""
    if milliseconds < 0:
        raise UnitError(f"{milliseconds} is not a duration: durations are never negative")
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


# --- AWS rates and byte counts ---------------------------------------------------------------------------

BYTES_PER_MB = 1_000_000  # SI megabyte
BYTES_PER_MIB = MIB  # IEC mebibyte
BYTES_PER_KIB = KIB
KIB_PER_MIB = 1024
GIB_PER_TIB = 1024
BITS_PER_BYTE = 8


def mbps_to_mb_per_s(megabits_per_s: float) -> float:
    """Convert megabits per second (AWS "bandwidth") to decimal megabytes per second (docs/reference/ec2-ebs-limits.md#units)."""
    return megabits_per_s / BITS_PER_BYTE


def mb_to_mib(mb_per_s: float) -> float:
    """Convert decimal MB/s to binary MiB/s."""
    return mb_per_s * BYTES_PER_MB / BYTES_PER_MIB


def mib_to_mb(mib_per_s: float) -> float:
    """Convert binary MiB/s to decimal MB/s."""
    return mib_per_s * BYTES_PER_MIB / BYTES_PER_MB


def bytes_to_mib(n_bytes: float) -> float:
    """Convert a byte count to MiB."""
    return n_bytes / BYTES_PER_MIB


def bytes_to_kib(n_bytes: float) -> float:
    """Convert a byte count to KiB."""
    return n_bytes / BYTES_PER_KIB


def gib_to_tib(gib: float) -> float:
    """Convert GiB to TiB."""
    return gib / GIB_PER_TIB
