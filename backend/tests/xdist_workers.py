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
* Shared state that cannot be split is kept on one worker by an `xdist_group` (scripts/test.sh runs
  `--dist loadgroup`); every other test file is its own group, so a file's module- and session-scoped fixtures
  are built once, on one worker, as with `--dist loadfile`:
    - "moto": the moto server is one AWS account for everybody; these files create, count and delete EC2
      instances and volumes in fixed regions (tests/patches use eu-north-1, sources/aws empties the region it
      takes), so two of them at once would see or delete each other's resources.
    - "prometheus": the tests of sources/prometheus share one session fixture that simulates two clusters, loads
      their history into a Prometheus of its own and scrapes live exporters (tens of seconds to build); grouped,
      it is built once instead of once per worker.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

REDIS_DBS_PER_WORKER = 16

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

REPO_ROOT = Path(__file__).resolve().parents[2]


def worker_index() -> int | None:
    """Return N for xdist worker gwN, None outside xdist."""
    name = os.environ.get("PYTEST_XDIST_WORKER")
    return int(name.removeprefix("gw")) if name else None


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
    name = f"{template.database}_{worker}"
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            # Workers start together and copy the same template: PostgreSQL refuses a copy while another session
            # is connected to the template, so a refused copy is retried briefly.
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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "xdist_group(name): run these tests on one xdist worker (xdist_workers.py)")
    index = worker_index()
    if index is None:
        return
    worker = f"gw{index}"
    database_url = os.environ.get("HEADROOM_TEST_DATABASE_URL")
    admin_url = os.environ.get("HEADROOM_TEST_PG_ADMIN_URL")
    if database_url and admin_url:
        os.environ["HEADROOM_TEST_DATABASE_URL"] = _worker_database(database_url, admin_url, worker)
    redis_url = os.environ.get("HEADROOM_TEST_REDIS_URL")
    if redis_url:
        base = redis_url.rpartition("/")[0]
        os.environ["HEADROOM_TEST_REDIS_URL"] = f"{base}/{index * REDIS_DBS_PER_WORKER}"


def _group(rel: str) -> str:
    for group, paths in GROUPS.items():
        if any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in paths):
            return group
    return rel


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            rel = item.path.resolve().relative_to(REPO_ROOT).as_posix()
            item.add_marker(pytest.mark.xdist_group(_group(rel)))
