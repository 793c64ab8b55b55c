"""The suite's xdist scheduler hands out the longest scopes first, by the recorded seconds of their files."""

from __future__ import annotations

from xdist_workers import FILE_SECONDS, _recorded_seconds, _scope_seconds


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
