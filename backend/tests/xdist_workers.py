"""Running the suite on several cores (pytest-xdist): each worker gets services of its own, and tests that share
state outside the worker are kept on one worker.

Loaded for every run as a plugin (`-p xdist_workers` in pyproject.toml), so it also covers `worker/tests` run on
their own. Without xdist (no PYTEST_XDIST_WORKER) it changes nothing.

* PostgreSQL: worker gwN works in `<test database>_gwN`, a copy of the migrated test database made with
  CREATE DATABASE ... TEMPLATE (a file copy, far cheaper than running the migrations again). Each test still runs
  in a transaction rolled back at its end; the copy keeps tests that commit on purpose (subprocesses, servers of
  their own) from seeing another worker's rows.
* Redis: worker gwN uses the databases from N * REDIS_DBS_PER_WORKER on (scripts/services.sh starts Redis with
  enough of them); tests name a database relative to theirs with `redis_db(url, n)`.
* Files: tmp_path is per worker already (pytest names the base directory after the worker).
* Ports: every test server binds a free port (port 0) or 127.0.0.x of its own, so workers never collide.
* Shared state that cannot be split is kept on one worker: with `--dist loadgroup` (scripts/test.sh) each test
  file is scheduled whole (its module- and session-scoped fixtures are built once, on one worker, as with
  `--dist loadfile`), and the files of each group below are scheduled together, one after another:
    - "moto": the moto server is one AWS account for everybody; these files create, count and delete EC2
      instances and volumes in fixed regions (tests/patches use eu-north-1, sources/aws empties the region it
      takes), so two of them at once would see or delete each other's resources.
    - "prometheus": the tests of sources/prometheus share one session fixture that simulates two clusters, loads
      their history into a Prometheus of its own and scrapes live exporters (tens of seconds to build); grouped,
      it is built once instead of once per worker.
"""

from __future__ import annotations

import fnmatch
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

REDIS_DBS_PER_WORKER = 16
REDIS_DATABASES = 256  # scripts/services.sh starts Redis with this many (`--databases`)
MAX_WORKERS = REDIS_DATABASES // REDIS_DBS_PER_WORKER
_CREATED: list[str] = []  # the database this worker made (dropped when the worker ends)

# Paths relative to the repository root; a directory covers the files under it.
GROUPS: dict[str, tuple[str, ...]] = {
    "moto": (
        "backend/tests/sources/aws/",
        "backend/tests/patches/test_aws_script_in_aws_cli.py",
        "backend/tests/patches/test_new_volume_script.py",
        "backend/tests/patches/test_volume_resize_script.py",
        "backend/tests/patches/test_rolling_restart_script.py",
        "backend/tests/domain/catalog/test_catalog_refresh_moto.py",
        "backend/tests/domain/catalog/test_catalog_price_list.py",
        "backend/tests/commands/test_catalog_cli.py",
        "worker/tests/test_ingest_kill.py",
    ),
    "prometheus": ("backend/tests/sources/prometheus/",),
}

# Each test file's wall time in a whole run (`bench/pytest_cpu.py DIR --file-seconds` writes it): the scheduler
# hands out the longest scopes first, so no worker starts a long group while the other has nothing left to do.
FILE_SECONDS = Path(__file__).with_name("file_seconds.json")


def worker_index() -> int | None:
    """Return N for xdist worker gwN, None outside xdist."""
    name = os.environ.get("PYTEST_XDIST_WORKER")
    return int(name.removeprefix("gw")) if name else None


def worker_redis_base(index: int) -> int:
    """The first Redis database of worker gw<index>'s range; a worker beyond the databases Redis has is refused."""
    if index >= MAX_WORKERS:
        raise pytest.UsageError(
            f"xdist worker gw{index}: Redis has {REDIS_DATABASES} databases, {REDIS_DBS_PER_WORKER} a worker, so a run "
            f"takes at most {MAX_WORKERS} workers (-n {MAX_WORKERS} or HEADROOM_TEST_WORKERS={MAX_WORKERS})")
    return index * REDIS_DBS_PER_WORKER


def auto_workers(cores: int) -> int:
    """How many workers `-n auto` starts: one per core and one more, at most MAX_WORKERS.

    A worker spends about a fifth of its time waiting (on the `aws` CLI, Celery workers and servers it started, on
    sockets), so one worker more than the cores keeps them busy: on the 2-core CI machine, alone and quiet, 2 workers
    took 418 s and 3 took 346 s for the same 573 s of CPU (bench/ci_time.md, "Tenth pass")."""
    return max(1, min(cores + 1, MAX_WORKERS))


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # pytest-xdist's hook: absent with -p no:xdist
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` (scripts/test.sh): auto_workers of the cores this process may run on. PYTEST_XDIST_AUTO_NUM_WORKERS,
    when set, is left to xdist, which reads it."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return auto_workers(len(os.sched_getaffinity(0)))


def redis_db(url: str, n: int) -> str:
    """Return `url` pointing at Redis database n of this worker's range (url's own database is the range's 0)."""
    base, _, db = url.rpartition("/")
    if n >= REDIS_DBS_PER_WORKER:
        raise ValueError(f"a worker has {REDIS_DBS_PER_WORKER} Redis databases; {n} is out of its range")
    return f"{base}/{int(db or 0) + n}"


def _worker_database(url: str, admin_url: str, worker: str) -> str:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    template = make_url(url)
    # The run's id in the name: two runs against the same services (a developer's second terminal) never drop
    # each other's databases.
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")[:8]
    name = f"{template.database}_{worker}_{run}" if run else f"{template.database}_{worker}"
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            # Workers start together and copy the same template: PostgreSQL refuses a copy while another session
            # is connected to the template (https://www.postgresql.org/docs/current/manage-ag-templatedbs.html),
            # so a refused copy is retried briefly.
            for attempt in range(50):
                try:
                    conn.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{template.database}"'))
                    break
                except Exception as exc:
                    if "is being accessed by other users" not in str(exc) or attempt == 49:
                        raise
                    time.sleep(0.2)
    finally:
        engine.dispose()
    return template.set(database=name).render_as_string(hide_password=False)


def _rewrite_test_modules_once(config: pytest.Config) -> None:
    """Write the assert-rewritten bytecode of the run's test modules and conftests before the workers start.

    pytest rewrites the asserts of every test module it imports and keeps the result beside it (a `-pytest-`
    .pyc in __pycache__). On a fresh clone no such file exists yet, and the workers, starting together, each
    rewrote all of them: about 4 s of CPU per worker for the whole suite. Written once here with pytest's own
    functions (the same code object a worker would make, checked by test_xdist_scheduling.py), the workers
    read them. Any failure leaves the rewriting to the workers, as before."""
    if config.getoption("assertmode", "rewrite") != "rewrite" or sys.dont_write_bytecode:
        return
    try:
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
            try_makedirs,
        )
    except ImportError:  # another pytest: its workers rewrite as they always did
        return
    state = config.stash.get(assertstate_key, None)
    if state is None:
        return
    patterns = ["conftest.py", *config.getini("python_files")]
    for fn in _test_files(config, patterns):
        cache_dir = get_cache_dir(fn)
        pyc = cache_dir / (fn.name[:-3] + PYC_TAIL)
        if not try_makedirs(cache_dir) or _read_pyc(fn, pyc, state.trace) is not None:
            continue
        try:
            source_hash, co = _rewrite_test(fn, config)
        except SyntaxError:  # the worker's import reports it
            continue
        _write_pyc(state, co, source_hash, pyc)


def _test_files(config: pytest.Config, patterns: list[str]) -> list[Path]:
    """The .py files under the run's arguments (or testpaths) whose names match `patterns`."""
    found: set[Path] = set()
    base = config.invocation_params.dir
    for arg in config.args:
        path = (base / arg.split("::")[0]).resolve()
        candidates = path.rglob("*.py") if path.is_dir() else [path]
        found.update(p for p in candidates if any(fnmatch.fnmatch(p.name, pat) for pat in patterns))
    return sorted(found)


def pytest_configure(config: pytest.Config) -> None:
    index = worker_index()
    if index is None:
        # the xdist controller, before it starts the workers (xdist's own test of a distributed run)
        if not config.getoption("collectonly") and config.getoption("dist", "no") != "no" and config.getoption("tx", None):
            _rewrite_test_modules_once(config)
        return
    worker = f"gw{index}"
    database_url = os.environ.get("HEADROOM_TEST_DATABASE_URL")
    admin_url = os.environ.get("HEADROOM_TEST_PG_ADMIN_URL")
    if database_url and admin_url:
        os.environ["HEADROOM_TEST_DATABASE_URL"] = _worker_database(database_url, admin_url, worker)
        _CREATED.append(os.environ["HEADROOM_TEST_DATABASE_URL"])
    redis_url = os.environ.get("HEADROOM_TEST_REDIS_URL")
    if redis_url:
        base = redis_url.rpartition("/")[0]
        os.environ["HEADROOM_TEST_REDIS_URL"] = f"{base}/{worker_redis_base(index)}"


def pytest_unconfigure(config: pytest.Config) -> None:
    database_url = os.environ.get("HEADROOM_TEST_DATABASE_URL")
    admin_url = os.environ.get("HEADROOM_TEST_PG_ADMIN_URL")
    if worker_index() is None or not (database_url and admin_url and _CREATED):
        return
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{make_url(database_url).database}" WITH (FORCE)'))
    finally:
        engine.dispose()


def _group(rel: str) -> str:
    for group, paths in GROUPS.items():
        if any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in paths):
            return group
    return rel


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: absent when the plugin is off (-p no:xdist)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With `--dist loadgroup`, schedule whole test files, and the files of each of GROUPS together.

    xdist's own loadgroup reads `xdist_group` markers from node ids that pytest 9 no longer carries, so the
    grouping is done here, from the paths, on the controller: LoadScopeScheduling sends each scope to one worker
    (largest scope first)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    recorded = _recorded_seconds()
    per_test = sum(s for s, _ in recorded.values()) / max(1, sum(n for _, n in recorded.values())) or 0.1

    class FileGroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return _group(nodeid.split("::", 1)[0])

        def _assign_work_unit(self, node: Any) -> None:
            # Longest first (LPT: https://en.wikipedia.org/wiki/Longest-processing-time-first_scheduling) by the
            # recorded times, where xdist orders scopes by their number of tests.
            if not self.ordered:
                units = sorted(self.workqueue.items(), key=lambda unit: -_scope_seconds(unit[1], recorded, per_test))
                self.workqueue.clear()
                self.workqueue.update(units)
                self.ordered = True
            super()._assign_work_unit(node)

    return FileGroupScheduling(config, log)


def _recorded_seconds() -> dict[str, tuple[float, int]]:
    """file -> (wall seconds, tests) from FILE_SECONDS; empty when it is missing or unreadable (the order is then
    by number of tests, a guess, never a failure)."""
    try:
        files = json.loads(FILE_SECONDS.read_text())["files"]
        return {path: (float(row["seconds"]), int(row["tests"])) for path, row in files.items()}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _scope_seconds(nodeids: dict[str, bool], recorded: dict[str, tuple[float, int]], per_test: float) -> float:
    """A scope's expected wall time: its files' recorded seconds, scaled by how many of their tests run now; a
    file not recorded counts `per_test` seconds a test (the recorded files' mean)."""
    counts: dict[str, int] = {}
    for nodeid in nodeids:
        path = nodeid.split("::", 1)[0]
        counts[path] = counts.get(path, 0) + 1
    total = 0.0
    for path, n in counts.items():
        seconds, tests = recorded.get(path, (0.0, 0))
        total += seconds * n / tests if tests else per_test * n
    return total
