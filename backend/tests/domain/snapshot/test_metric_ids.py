"""The metric ids code names series by are the registry's, one constant per entry and no other."""

from __future__ import annotations

import ast
from pathlib import Path

from headroom.domain.snapshot import metric_ids
from headroom.domain.snapshot.registry import REGISTRY

PACKAGE = Path(__file__).resolve().parents[3] / "headroom"


def test_every_constant_is_a_registry_entry_and_every_entry_has_one() -> None:
    constants = {name: value for name, value in vars(metric_ids).items() if name.isupper()}
    assert set(constants.values()) == set(REGISTRY)
    assert len(constants) == len(REGISTRY)


def test_no_module_names_a_registry_metric_by_a_bare_string() -> None:
    # The registry defines the names and metric_ids repeats them as constants; everything else uses the constants.
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.name in ("registry.py", "metric_ids.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in REGISTRY:
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.value!r}")
    assert offenders == []
