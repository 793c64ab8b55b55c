"""Findings stay identical while the advisor's internals change: every example scenario against a golden file.

The golden file (`golden/findings.json`) was generated from the advisor before the derived-metrics and
performance work (one vectorised `derived` module, an indexed context) and must not be regenerated
to make this test pass: a difference is a behaviour change to explain, not a file to refresh.

What is compared, per finding (sorted by dedup key): rule, severity, dedup key, title, entity kind and id, the
evidence measures (label, value, unit, limit), share of window, longest run, episodes, each change's key and
proposed value (primary changes and every option's), and the impact numbers. Numbers are stored rounded to 6
significant digits and compared with that tolerance.

Only `extract()` knows the shape of a finding; the change and evidence models are being retyped in parallel, so
when a field moves, adapt `extract()` and keep the golden file as it is.

Regenerate (only for a deliberate behaviour change, explained in the commit):
    HEADROOM_REGENERATE_GOLDEN=1 uv run pytest backend/tests/domain/advisor/test_findings_golden.py
"""

from __future__ import annotations

import json
import math
import os
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from headroom.domain.advisor import advise, discover_rules
from headroom.domain.snapshot.scenario import load_scenario
from headroom.domain.snapshot.simulate import simulate

SCENARIOS = Path(__file__).resolve().parents[4] / "examples" / "scenarios"
GOLDEN = Path(__file__).with_name("golden") / "findings.json"
DEFAULT_START = datetime(2026, 1, 5, tzinfo=UTC)
# Every example scenario over one day, and the demo fleet (6 nodes) over the benchmark's 7 days.
CASES: list[tuple[str, float]] = [(p.stem, 24.0) for p in sorted(SCENARIOS.glob("*.yaml"))] + [
    ("demo", 168.0)
]
REL_TOL = 2e-6  # the golden numbers carry 6 significant digits


def case_id(name: str, hours: float) -> str:
    return f"{name}@{hours:g}h"


def sig6(x: Any) -> Any:
    """Round a number to 6 significant digits (NaN and infinities as strings: JSON has neither)."""
    if isinstance(x, bool) or x is None:
        return x
    if isinstance(x, int):
        return x
    if isinstance(x, float):
        if not math.isfinite(x):
            return str(x)
        return float(f"{x:.6g}")
    return x


def plain(value: Any) -> Any:
    """A change's proposed value as JSON: numbers rounded, lists and dicts walked."""
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in sorted(value.items())}
    return sig6(value)


def _change(change: Any) -> dict[str, Any]:
    key = getattr(change, "key", None) or getattr(change, "attribute", None)
    return {"key": key, "proposed": plain(change.proposed)}


def _impact(impact: Any) -> dict[str, Any]:
    names = (
        "before",
        "after",
        "headroom_before_pct",
        "headroom_after_pct",
        "monthly_cost_before_usd",
        "monthly_cost_after_usd",
        "monthly_cost_delta_usd",
    )
    return {n: sig6(getattr(impact, n, None)) for n in names}


def extract(finding: Any) -> dict[str, Any]:
    """The values of one finding this test guards, in plain JSON (the one place that knows the model's shape)."""
    ev = finding.evidence
    return {
        "rule": finding.rule,
        "severity": str(getattr(finding.severity, "value", finding.severity)),
        "dedup_key": finding.dedup_key,
        "title": finding.title,
        "entity": {"kind": finding.entity.kind, "id": finding.entity.id},
        "measures": [
            {"label": m.label, "value": sig6(float(m.value)), "unit": m.unit, "limit": sig6(m.limit)}
            for m in ev.measures
        ],
        "share_of_window": sig6(ev.share_of_window),
        "longest_run_minutes": sig6(ev.longest_run_minutes),
        "episodes": ev.episodes,
        "changes": [_change(c) for c in finding.changes],
        "options": [
            {"label": o.label, "changes": [_change(c) for c in o.changes], "impact": _impact(o.impact)}
            for o in finding.options
        ],
        "impact": _impact(finding.impact),
    }


@cache
def findings_of(name: str, hours: float) -> list[dict[str, Any]]:
    scenario = load_scenario(SCENARIOS / f"{name}.yaml")
    snapshot = simulate(scenario, hours=hours, seed=0, start=scenario.start or DEFAULT_START)
    return sorted((extract(f) for f in advise(snapshot)), key=lambda f: f["dedup_key"])


def _close(actual: Any, expected: Any, path: str, problems: list[str]) -> None:
    if isinstance(expected, dict) and isinstance(actual, dict):
        if sorted(actual) != sorted(expected):
            problems.append(f"{path}: keys {sorted(actual)} != {sorted(expected)}")
            return
        for k in expected:
            _close(actual[k], expected[k], f"{path}.{k}", problems)
    elif isinstance(expected, list) and isinstance(actual, list):
        if len(actual) != len(expected):
            problems.append(f"{path}: {len(actual)} items != {len(expected)}")
            return
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _close(a, e, f"{path}[{i}]", problems)
    elif (
        isinstance(expected, float | int)
        and isinstance(actual, float | int)
        and not isinstance(expected, bool)
        and not isinstance(actual, bool)
    ):
        if not math.isclose(actual, expected, rel_tol=REL_TOL, abs_tol=1e-12):
            problems.append(f"{path}: {actual!r} != {expected!r}")
    elif actual != expected:
        problems.append(f"{path}: {actual!r} != {expected!r}")


def test_golden_file_covers_every_example_scenario() -> None:
    golden = json.loads(GOLDEN.read_text())
    assert sorted(golden) == sorted(case_id(n, h) for n, h in CASES)
    # Not vacuous: together the scenarios raise findings of every rule.
    rules = {f["rule"] for findings in golden.values() for f in findings}
    # projected-ceiling reads the projections job's stored fits, which a simulated day does not have: its cases
    # are in test_rules_disk_and_projected.py
    assert rules == {r.id for r in discover_rules()} - {"projected-ceiling"}


@pytest.mark.parametrize(("name", "hours"), CASES, ids=[case_id(n, h) for n, h in CASES])
def test_findings_match_golden(name: str, hours: float) -> None:
    actual = findings_of(name, hours)
    if os.environ.get("HEADROOM_REGENERATE_GOLDEN"):
        golden = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
        golden[case_id(name, hours)] = actual
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(dict(sorted(golden.items())), indent=1, sort_keys=True) + "\n")
        return
    expected = json.loads(GOLDEN.read_text())[case_id(name, hours)]
    problems: list[str] = []
    _close(actual, expected, case_id(name, hours), problems)
    assert not problems, "\n".join(problems[:40])
