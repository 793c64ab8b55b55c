"""One time-series repository: no module of the package but headroom.timeseries.repository names the series, points
and rollup tables in SQL (or their ORM classes), so every read and write of series, points and rollups goes through
it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "headroom"
WORKER = PACKAGE.parents[1] / "worker" / "headroom_worker"
# The repository (and its binary COPY codec, which names the columns it encodes).
OWNERS = {"timeseries/repository.py", "timeseries/copy_binary.py"}
# The ORM declarations of the tables (migrations and `alembic check` read them).
DECLARATIONS = {"timeseries/models.py"}
TABLES = re.compile(r"\bmetric_(series|points|rollups|rollup_dirty)\b")
ORM_CLASSES = {"MetricSeries", "MetricPoints", "MetricRollup", "MetricRollupDirty"}


def _violations(path: Path, rel: str) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings \
                and TABLES.search(node.value):
            found.append(f"{rel}:{node.lineno}: SQL names {TABLES.search(node.value).group(0)}")  # type: ignore[union-attr]
        if isinstance(node, ast.Name | ast.alias) and (getattr(node, "id", None) or getattr(node, "name", None)) \
                in ORM_CLASSES:
            found.append(f"{rel}:{node.lineno}: uses the ORM class of a points/rollup table")
    return found


def test_only_the_repository_touches_the_points_and_rollup_tables() -> None:
    violations: list[str] = []
    for root in (PACKAGE, WORKER):
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(PACKAGE).as_posix() if root == PACKAGE else f"worker/{path.name}"
            if rel in OWNERS or rel in DECLARATIONS:
                continue
            violations += _violations(path, rel)
    assert violations == [], "read and write points/rollups through the time-series repository:\n" + "\n".join(
        violations)


def test_the_check_sees_a_query_outside_the_repository(tmp_path: Path) -> None:
    stray = tmp_path / "stray.py"
    stray.write_text('"""Mentions metric_points in a docstring, which is fine."""\n'
                     'Q = "SELECT vals FROM metric_points WHERE series_id = 1"\n'
                     "from headroom.timeseries.models import MetricRollup\n")
    found = _violations(stray, "stray.py")
    assert found == ["stray.py:2: SQL names metric_points", "stray.py:3: uses the ORM class of a points/rollup table"]


def test_the_check_sees_the_series_table_outside_the_repository(tmp_path: Path) -> None:
    stray = tmp_path / "stray.py"
    stray.write_text('Q = "UPDATE metric_series SET step_seconds = 300"\n'
                     "from headroom.timeseries.models import MetricSeries\n")
    found = _violations(stray, "stray.py")
    assert found == ["stray.py:1: SQL names metric_series", "stray.py:2: uses the ORM class of a points/rollup table"]
