"""One number, written one way: the backend's formatter holds the table of docs/number-formats.json and writes
each of its cases as the file says; frontend/src/lib/number-formats.test.ts checks the web app against the same
file, so the app and the weekly email cannot print one quantity two ways."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from headroom.domain.units import QUANTITY_RULES, format_duration_words, format_quantity, setting_text

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


@pytest.mark.parametrize("case", SHARED["settings"], ids=lambda c: f"{c['key']}={c['value']}")
def test_settings(case: dict[str, Any]) -> None:
    assert setting_text(case["key"], case["value"]) == case["text"]
