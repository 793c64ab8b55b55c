"""One number, written one way: the backend's formatter holds the table of docs/number-formats.json and writes
each of its cases as the file says; frontend/src/lib/number-formats.test.ts checks the web app against the same
file, so the app and the weekly email cannot print one quantity two ways."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from headroom.domain.units import (
    QUANTITY_RULES,
    SIZE_READING,
    format_days,
    format_duration_words,
    format_quantity,
    format_share,
    format_usd_change,
    setting_text,
)

SHARED = json.loads((Path(__file__).resolve().parents[3] / "docs" / "number-formats.json").read_text())


def test_the_backend_holds_the_shared_table() -> None:
    def plain(rule: dict[str, Any]) -> dict[str, Any]:
        shown = {"digits": list(rule["digits"])}
        shown |= {k: v for k, v in rule.items() if k != "digits" and v not in ("", False)}
        return shown

    assert {unit: plain(asdict(rule)) for unit, rule in QUANTITY_RULES.items()} == SHARED["rules"]


@pytest.mark.parametrize("case", SHARED["quantities"], ids=lambda c: f"{c['value']} {c['unit']}")
def test_quantities(case: dict[str, Any]) -> None:
    assert format_quantity(case["value"], case["unit"]) == case["text"]


@pytest.mark.parametrize("case", SHARED["durations"], ids=lambda c: str(c["seconds"]))
def test_durations(case: dict[str, Any]) -> None:
    assert format_duration_words(case["seconds"]) == case["text"]


def test_the_ninety_percent_line_of_125_mibps_reads_113_not_112() -> None:
    # 0.9 x 125 = 112.5: Python's f"{x:.0f}" rounds half to even (112), the browser half up (113).
    assert f"{0.9 * 125:.0f}" == "112"
    assert format_quantity(0.9 * 125, "MiB/s") == "113 MiB/s"


def test_the_backend_holds_the_shared_size_reading() -> None:
    assert asdict(SIZE_READING) == SHARED["size_reading"]


@pytest.mark.parametrize("case", SHARED["settings"], ids=lambda c: f"{c['key']}={c['value']}")
def test_settings(case: dict[str, Any]) -> None:
    assert setting_text(case["key"], case["value"]) == case["text"]


@pytest.mark.parametrize(
    ("fraction", "text"),
    [(0.425, "42.5%"), (0.9, "90%"), (0.0625, "6.25%"), (0.07, "7%"), (0.99995, "100%"), (0.0, "0%")],
)
def test_a_share_is_a_percentage_by_the_percent_rule(fraction: float, text: str) -> None:
    """format_share(x) is format_quantity(100 x, "%"): 0.9 reads "90%" (not "90.00000000000001%")."""
    assert format_share(fraction) == text == format_quantity(100 * fraction, "%")


@pytest.mark.parametrize(
    ("delta", "text"),
    [(12, "+$12.00"), (-10, "\u2212$10.00"), (0, "$0.00"), (0.004, "$0.00"), (1234.5, "+$1,234.50"), (-0.125, "\u2212$0.13")],
)
def test_a_cost_change_is_signed_as_the_app_writes_it(delta: float, text: str) -> None:
    """As frontend/src/lib/format.ts formatUsdChange: a plus or a minus sign (U+2212) before the dollar amount."""
    assert format_usd_change(delta) == text


@pytest.mark.parametrize(
    ("days", "to", "text"),
    [(12.4, None, "12 days"), (0.5, None, "1 day"), (1.2, None, "1 day"), (0.2, None, "0 days"), (90, None, "90 days"),
     (8.5, 15.49, "9-15 days")],
)
def test_days_are_whole_halves_up(days: float, to: float | None, text: str) -> None:
    """As formatDaysUntil: whole days, halves up (8.5 -> 9; Python's round() would say 8)."""
    assert format_days(days, to) == text


def test_the_backend_scales_stored_units_as_the_shared_table_says() -> None:
    """One table of stored unit -> shown unit and factor, for the charts, the guards and the front end's raw series."""
    from headroom.domain.snapshot.labels import STORED_TO_SHOWN

    assert {(row["stored"], row["shown"]): row["factor"] for row in SHARED["stored_to_shown"]} == STORED_TO_SHOWN
