"""The suite's xdist scheduler hands out the longest scopes first, by the recorded seconds of their files; its
controller writes the assert-rewritten test modules once for the workers."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, _rewrite_test, get_cache_dir
from xdist_workers import (
    FILE_SECONDS,
    MAX_WORKERS,
    REDIS_DATABASES,
    auto_workers,
    _recorded_seconds,
    _rewrite_test_modules_once,
    _scope_seconds,
    worker_redis_base,
)


def test_a_scope_costs_its_files_recorded_seconds_for_the_tests_that_run_and_the_mean_for_a_new_file() -> None:
    recorded = {"a.py": (100.0, 10), "b.py": (1.0, 10)}
    half_of_a = {f"a.py::t{i}": False for i in range(5)}
    assert _scope_seconds(half_of_a, recorded, per_test=0.5) == 50.0
    assert _scope_seconds({"new.py::t1": False, "new.py::t2": False, "b.py::t1": False}, recorded, 0.5) == 1.1
    scopes = {"b": {"b.py::t1": False}, "a": {"a.py::t1": False}, "new": {"new.py::t1": False}}
    order = sorted(scopes, key=lambda scope: -_scope_seconds(scopes[scope], recorded, 0.5))
    assert order == ["a", "new", "b"]


def test_the_recorded_seconds_are_read_from_the_file_the_profiler_writes() -> None:
    recorded = _recorded_seconds()
    assert FILE_SECONDS.exists() and len(recorded) > 100
    seconds, tests = recorded["backend/tests/api/test_schemathesis.py"]
    assert seconds > 0 and tests > 0


def test_the_controller_writes_the_rewritten_test_modules_a_worker_would_load(
        pytestconfig: pytest.Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "test_sample.py").write_text("def test_sample():\n    got = 2\n    assert got == 1\n")
    (tmp_path / "conftest.py").write_text("")
    (tmp_path / "sample_helper.py").write_text("")
    monkeypatch.setattr(pytestconfig, "args", [str(tmp_path)])
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    _rewrite_test_modules_once(pytestconfig)

    def cached(name: str) -> Path:
        return get_cache_dir(tmp_path / name) / (name[:-3] + PYC_TAIL)

    assert cached("conftest.py").exists() and not cached("sample_helper.py").exists()
    fn = tmp_path / "test_sample.py"
    code = _read_pyc(fn, cached("test_sample.py"))  # pytest's own check of a cached module: None when stale
    assert code is not None and code == _rewrite_test(fn, pytestconfig)[1]
    namespace: dict[str, object] = {}
    exec(code, namespace)
    with pytest.raises(AssertionError) as failure:
        namespace["test_sample"]()  # type: ignore[operator]
    assert "assert 2 == 1" in str(failure.value)  # the rewritten assert explains itself


def test_each_worker_has_redis_databases_of_its_own_and_a_worker_beyond_them_is_refused_in_words() -> None:
    # scripts/services.sh starts Redis with the databases the workers' ranges are cut from.
    services = (Path(__file__).resolve().parents[2] / "scripts" / "services.sh").read_text()
    assert re.search(r"--databases (\d+)", services).group(1) == str(REDIS_DATABASES)  # type: ignore[union-attr]
    assert MAX_WORKERS == 16
    bases = [worker_redis_base(i) for i in range(MAX_WORKERS)]
    assert bases == list(range(0, 256, 16))
    with pytest.raises(pytest.UsageError, match=r"gw16: Redis has 256 databases, 16 a worker, so a run takes at most 16"):
        worker_redis_base(MAX_WORKERS)


def test_auto_starts_one_worker_per_core_and_one_more_within_the_redis_databases() -> None:
    assert [auto_workers(cores) for cores in (1, 2, 8, 15, 16, 64)] == [2, 3, 9, 16, 16, 16]
