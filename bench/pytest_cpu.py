"""A pytest plugin that records each test's CPU: `PYTHONPATH=bench uv run pytest -p pytest_cpu ...` with
HEADROOM_TEST_CPU_DIR set to a directory. Each process (the controller and every xdist worker) appends one JSON line
per test to <dir>/<worker>.jsonl: when it ended (Unix time), wall seconds, the test process's own CPU (user + system, all its threads)
and the CPU of the child processes it waited for (an `aws` CLI call, a Celery worker, `headroom up`), which is
what the kernel adds to RUSAGE_CHILDREN when a child is reaped. What the shared services (PostgreSQL, Redis, moto,
Prometheus) spend is not in it: bench/ci_time.md reads their totals from /proc around the run.

`uv run python bench/pytest_cpu.py <dir>` sums the lines per file and lists the costliest tests;
`uv run python bench/pytest_cpu.py <dir> --file-seconds backend/tests/file_seconds.json` writes each file's wall
seconds, which the xdist scheduler (backend/tests/xdist_workers.py) reads to hand out the longest files first.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def _out() -> Path | None:
    where = os.environ.get("HEADROOM_TEST_CPU_DIR")
    if not where:
        return None
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    Path(where).mkdir(parents=True, exist_ok=True)
    return Path(where) / f"{worker}.jsonl"


_started: list[bool] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    out = _out()
    wall0, (own0, kids0) = time.monotonic(), _cpu()
    if out is not None and not _started:
        _started.append(True)
        with out.open("a") as f:  # interpreter start, imports and collection: all before the first test
            f.write(json.dumps({"test": "<start>", "wall": 0, "cpu": round(own0, 3), "children": round(kids0, 3)}) + "\n")
    yield
    if out is None:
        return
    wall1, (own1, kids1) = time.monotonic(), _cpu()
    line = {"test": item.nodeid, "wall": round(wall1 - wall0, 3), "cpu": round(own1 - own0, 3),
            "children": round(kids1 - kids0, 3), "ended": round(time.time(), 3)}
    with out.open("a") as f:
        f.write(json.dumps(line) + "\n")


def summarise(where: Path, top: int = 40) -> None:
    per_file: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    tests = []
    for path in sorted(where.glob("*.jsonl")):
        for raw in path.read_text().splitlines():
            line = json.loads(raw)
            name = line["test"]
            file = name.split("::")[0] if name != "<start>" else f"<start {path.stem}>"
            row = per_file[file]
            row[0] += line["wall"]
            row[1] += line["cpu"]
            row[2] += line["children"]
            row[3] += 1
            tests.append((line["cpu"] + line["children"], line["wall"], name))
    total = sum(r[1] + r[2] for r in per_file.values())
    print(f"total CPU in test processes and their children: {total:.0f} s over {len(tests)} tests")
    print(f"{'file':70} {'tests':>5} {'wall':>7} {'cpu':>7} {'kids':>7} {'share':>6}")
    for file, (wall, cpu, kids, n) in sorted(per_file.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))[:top]:
        print(f"{file[-70:]:70} {n:5d} {wall:7.1f} {cpu:7.1f} {kids:7.1f} {100 * (cpu + kids) / total:5.1f}%")
    print("\ncostliest tests (CPU incl. children, wall):")
    for cpu, wall, name in sorted(tests, reverse=True)[:top]:
        print(f"{cpu:7.1f} {wall:7.1f}  {name[-110:]}")


def file_seconds(where: Path, out: Path) -> None:
    """Write each test file's wall seconds and test count (backend/tests/file_seconds.json: the xdist scheduler's
    order, longest first)."""
    files: dict[str, dict[str, float]] = {}
    for path in sorted(where.glob("*.jsonl")):
        for raw in path.read_text().splitlines():
            line = json.loads(raw)
            if line["test"] == "<start>":
                continue
            row = files.setdefault(line["test"].split("::")[0], {"seconds": 0.0, "tests": 0})
            row["seconds"] += line["wall"]
            row["tests"] += 1
    rounded = {name: {"seconds": round(row["seconds"], 1), "tests": int(row["tests"])} for name, row in sorted(files.items())}
    lines = [f"  {json.dumps(name)}: {json.dumps(row)}" for name, row in rounded.items()]
    out.write_text('{"about": "wall seconds per test file in one whole run (bench/pytest_cpu.py)",\n "files": {\n'
                   + ",\n".join(lines) + "\n}}\n")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[2] == "--file-seconds":
        file_seconds(Path(sys.argv[1]), Path(sys.argv[3]))
    else:
        summarise(Path(sys.argv[1]))
