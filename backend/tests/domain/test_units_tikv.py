"""Sizes and durations as TiKV parses and prints them.

Expected values: tikv/tikv components/tikv_util/src/config.rs (ReadableSize/ReadableDuration and their tests
`test_parse_readable_size`), and the template's header ("1_048_576 = \"1MB\"", "78_000 = \"1.3m\"").
"""

from __future__ import annotations

import pytest
from headroom.domain.units import (
    UnitError,
    format_duration,
    format_size,
    is_size_text,
    parse_duration,
    parse_size,
)

KIB, MIB, GIB, TIB, PIB = 1024, 1024**2, 1024**3, 1024**4, 1024**5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1MB", 1_048_576),  # template header: 1_048_576 = "1MB" (binary KB/MB)
        ("32KB", 32 * KIB),  # "K" | "KB" | "KiB" => KIB
        ("32KiB", 32 * KIB),
        ("4GiB", 4 * GIB),
        ("512MiB", 512 * MIB),
        ("8M", 8 * MIB),  # template: compaction-guard-min-output-file-size = "8M"
        ("0.5KB", KIB // 2),  # TiKV decode case ("0.5KB", KIB / 2)
        ("0.5 TB", TIB // 2),  # TiKV decode case, space allowed
        ("1PiB", PIB),
        ("23", 23),  # TiKV decode case: no unit is bytes
        ("1024B", KIB),
        ("0B", 0),
        (65536, 65536),  # a TOML integer is bytes (visit_u64)
    ],
)
def test_parse_size(text: str | int, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize(
    "text", ["0.5kb", "0.5kB", "0.5Kb", "0.5k", "0.5g", "b", "gb", "1b", "B", "lots", "-1"]
)
def test_parse_size_rejects_what_tikv_rejects(text: str) -> None:
    # TiKV illegal_cases: units are case-sensitive; "lots" and "-1" are not sizes at all.
    with pytest.raises(UnitError):
        parse_size(text)
    assert not is_size_text(text)


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        (0, "0KiB"),
        (2 * KIB, "2KiB"),
        (4 * MIB, "4MiB"),
        (5 * GIB, "5GiB"),
        (7 * TIB, "7TiB"),
        (11 * PIB, "11PiB"),
        (512, 512),
        (1536 * KIB, "1536KiB"),
    ],
)
def test_format_size_like_readable_size_serialize(size: int, expected: str | int) -> None:
    # TiKV legal_cases: (0, "0KiB"), (2 * KIB, "2KiB") ...; 512 serializes as the integer 512.
    assert format_size(size) == expected


@pytest.mark.parametrize(
    ("text", "milliseconds"),
    [
        ("1h", 3_600_000),
        ("10m", 600_000),
        ("500ms", 500),
        ("1.3m", 78_000),  # template header: 78_000 = "1.3m"
        ("1h30m", 5_400_000),
        ("7d", 7 * 86_400_000),  # template: data-key-rotation-period = "7d"
        ("0s", 0),
        ("444us", 0.444),  # test-custom.toml: raft-write-wait-duration = "444us"
    ],
)
def test_parse_duration(text: str, milliseconds: float) -> None:
    assert parse_duration(text) == pytest.approx(milliseconds)


@pytest.mark.parametrize("text", ["1s1h", "10x", "", "h", "5 minutes"])
def test_parse_duration_rejects(text: str) -> None:
    # ReadableDuration: "d, h, m, s, ms should occur in given order"; unknown units are errors.
    with pytest.raises(UnitError):
        parse_duration(text)


@pytest.mark.parametrize(
    ("milliseconds", "text"), [(5_400_000, "1h30m"), (0, "0s"), (500, "500ms"), (90_061_001, "1d1h1m1s1ms")]
)
def test_format_duration_like_readable_duration_display(milliseconds: int, text: str) -> None:
    assert format_duration(milliseconds) == text
    assert parse_duration(text) == milliseconds


@pytest.mark.parametrize("value", ["32Ki", "8gib", "1 gb", 65536.0, True, None])
def test_one_parser_for_every_caller_follows_tikv(value: object) -> None:
    # The simulator's scenario check once used a case-insensitive parser that also took "32Ki" and floats; TiKV's
    # ReadableSize takes neither (units are K | KB | KiB ..., case-sensitive; a size is a string or an integer).
    with pytest.raises(UnitError):
        parse_size(value)  # type: ignore[arg-type]
