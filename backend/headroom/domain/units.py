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

import json
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal


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


# --- numbers as a person reads them ----------------------------------------------------------------------
#
# One rule per unit for every surface (API texts, the weekly email, the export files, the web app): how many
# decimals at each magnitude, and how the unit is written. The web app's formatter (frontend/src/lib/format.ts)
# holds the same table; docs/number-formats.json holds it too, with cases both test suites format and compare,
# so the email and the app never print one number two ways (docs/number-formats.md).
#
# Rounding is half up (half away from zero) on the shortest decimal that reads back as the float (`repr`),
# which is what the browser's Intl.NumberFormat does: 0.9 x 125 MiB/s = 112.5 reads "113 MiB/s" everywhere.
# Python's round() and format() round half to even on the binary value ("112"), so nothing a person reads may
# go through them.


@dataclass(frozen=True)
class QuantityRule:
    """How one unit is written: decimals at >= 100, >= 10 and below 10, and the text around the number."""

    digits: tuple[int, int, int]
    suffix: str = ""
    prefix: str = ""
    fixed: bool = False  # keep trailing zeros ("$3.50"); otherwise they go ("3.5 ms", "125 MiB/s")


_MAGNITUDE = (0, 1, 2)
QUANTITY_RULES: dict[str, QuantityRule] = {
    "IOPS": QuantityRule(_MAGNITUDE, " IOPS"),
    "MiB/s": QuantityRule(_MAGNITUDE, " MiB/s"),
    "MB/s": QuantityRule((2, 2, 2), " MB/s"),  # AWS's own figure beside ours, as AWS prints it (312.5, 593.75)
    "GiB": QuantityRule(_MAGNITUDE, " GiB"),
    "MiB": QuantityRule(_MAGNITUDE, " MiB"),
    "%": QuantityRule(_MAGNITUDE, "%"),
    "ms": QuantityRule(_MAGNITUDE, " ms"),
    "USD": QuantityRule((2, 2, 2), prefix="$", fixed=True),
    "": QuantityRule(_MAGNITUDE),
}


def round_half_up(value: float, digits: int = 0) -> Decimal:
    """Round `value` to `digits` decimals, halves away from zero, as the browser does (112.5 -> 113)."""
    return Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)


def format_quantity(value: float, unit: str) -> str:
    """Write `value` in `unit` the one way every surface does: "3,000 IOPS", "113 MiB/s", "42.5%", "$1,234.50".

    A unit without a rule is written after the number as it is ("12 stores")."""
    rule = QUANTITY_RULES.get(unit) or QuantityRule(_MAGNITUDE, f" {unit}" if unit else "")
    size = abs(value)
    digits = rule.digits[0] if size >= 100 else rule.digits[1] if size >= 10 else rule.digits[2]
    # Never "-0": zero, and noise just below zero that rounds to nothing at these digits, read 0.
    shown = round_half_up(0.0 if size < 0.5 * 10.0**-digits else value, digits)
    text = f"{abs(shown):,}"
    if "." in text and not rule.fixed:
        text = text.rstrip("0").rstrip(".")
    sign = "-" if shown < 0 else ""
    return f"{sign}{rule.prefix}{text}{rule.suffix}"


def format_share(fraction: float) -> str:
    """Write a fraction (0.425) as the percentage a person reads ("42.5%"), by the "%" rule of format_quantity."""
    return format_quantity(100.0 * fraction, "%")


def format_usd_change(delta: float) -> str:
    """Write a change in US dollars, signed, as the web app's formatUsdChange does: "+$12.00", "−$10.00" (a minus
    sign, not a hyphen), "$0.00" for no change (after rounding to the cent)."""
    text = format_quantity(abs(delta), "USD")
    if text == format_quantity(0.0, "USD"):
        return text
    return ("+" if delta > 0 else "\u2212") + text


def format_days(days: float, to: float | None = None) -> str:
    """Write a number of days, or a range of them, as whole days, halves up, as the web app's formatDaysUntil does
    ("12 days", "1 day", "9-16 days")."""
    first, last = (max(int(round_half_up(d)), 0) for d in (days, days if to is None else to))
    text = f"{first:,}" if to is None else f"{first:,}-{last:,}"
    return f"{text} day{'' if to is None and first == 1 else 's'}"


def format_duration_words(seconds: float) -> str:
    """Write a span of time in minutes, hours and minutes, or days and hours ("35 min", "3 h 20 min", "2 d 4 h")."""
    if not math.isfinite(seconds):
        return "—"
    minutes = int(round_half_up(seconds / 60))
    if minutes < 60:
        return f"{max(minutes, 0)} min"
    hours = minutes // 60
    if hours < 48:
        return f"{hours} h {minutes % 60} min" if minutes % 60 else f"{hours} h"
    days = hours // 24
    return f"{days} d {hours % 24} h" if hours % 24 else f"{days} d"


# The AWS attributes a change can set, and their units: EC2 ModifyVolume takes Size in GiB, Iops in IOPS and
# Throughput in MiB/s (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_ModifyVolume.html).
SETTING_UNITS: dict[str, str] = {"volume.size": "GiB", "volume.iops": "IOPS", "volume.throughput": "MiB/s"}


@dataclass(frozen=True)
class SizeReading:
    """The unit a TiKV size is also read in, beside the literal tikv.toml takes, and from what size on."""

    unit: str
    from_bytes: int


# A TiKV size keeps the literal a person types into tikv.toml ("14745MiB"), and from 1 GiB on it is also read in
# GiB, the unit the evidence and the AWS figures beside it use: "14745MiB (14.4 GiB)". A literal already in GiB
# is not said twice ("8GiB"); TiKV's "G" and "GB" are GiB too (ReadableSize: binary units), so "8GB (8 GiB)" says
# so. docs/number-formats.json holds this rule and its cases for both formatters (docs/number-formats.md).
SIZE_READING = SizeReading(unit="GiB", from_bytes=GIB)


def size_reading(text: str) -> str | None:
    """The GiB reading of a TiKV size literal ("14.4 GiB" for "14745MiB"), or None when it adds nothing: not a
    size with a unit, under 1 GiB, or written in GiB already."""
    match = _SIZE_RE.match(text)
    if match is None or match.group(2) in ("", "B", SIZE_READING.unit) or match.group(2) not in _SIZE_UNITS:
        return None
    size = parse_size(text)
    if size < SIZE_READING.from_bytes:
        return None
    return format_quantity(size / GIB, SIZE_READING.unit)


def setting_text(key: str, value: object) -> str:
    """Write a change's value as a person reads it: an AWS size or rate with its unit ("300 MiB/s"), a tikv.toml
    value as the config writes it ("4GiB", 4, true, ["no", "lz4"]) with a size's GiB reading from 1 GiB on
    ("14745MiB (14.4 GiB)"), an absent value as "not set"."""
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        if key in SETTING_UNITS:
            return format_quantity(float(value), SETTING_UNITS[key])
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    if isinstance(value, str):
        reading = size_reading(value)
        return value if reading is None else f"{value} ({reading})"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_json(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_json(v)}" for k, v in value.items()) + "}"
    return str(value)


def _json(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, ensure_ascii=False)


def format_moment(ts: datetime) -> str:
    """Write a moment as a person places a weekly peak: weekday, date and time in UTC ("Sun 11 Jan 03:00 UTC")."""
    utc = ts.astimezone(UTC)
    return f"{utc:%a} {utc.day} {utc:%b %H:%M} UTC"
