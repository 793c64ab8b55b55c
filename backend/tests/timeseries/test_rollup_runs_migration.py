"""Migration d5e1a7c3b9f2 turns the rollup queue's (series, hour) rows into runs of consecutive hours, and its
downgrade gives the hours back one row each. Run inside the test's transaction (PostgreSQL DDL is transactional),
so the shared test database keeps its head schema."""

from __future__ import annotations

import datetime as dt
import importlib.util
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

from alembic.migration import MigrationContext
from alembic.operations import Operations
from sqlalchemy import text

VERSIONS = Path(__file__).resolve().parents[3] / "migrations" / "versions"
T0 = dt.datetime(2026, 11, 2, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)
# Hours queued per series before the migration: runs of 3, 1 and 2 hours, and a series with a single hour.
QUEUED = {0: [0, 1, 2, 5, 7, 8], 1: [23]}


def _migration() -> ModuleType:
    path = next(VERSIONS.glob("*-d5e1a7c3b9f2_*.py"))
    spec = importlib.util.spec_from_file_location("migration_d5e1a7c3b9f2", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(connection: Any, step: Any) -> None:
    with Operations.context(MigrationContext.configure(connection)):
        step()


def test_hour_rows_become_runs_and_come_back_as_hours(connection: Any) -> None:
    migration = _migration()
    assert migration.down_revision == "d7e3b9a1c5f2"
    org = uuid.uuid4()
    connection.execute(text("INSERT INTO organizations (id, name, slug, aws_external_id) VALUES (:id, 'M', :s, :e)"),
                       {"id": org, "s": f"m-{org.hex[:8]}", "e": f"headroom-{org.hex}"})
    sids = [connection.execute(text(
        "INSERT INTO metric_series (org_id, entity_kind, entity_id, metric, unit) "
        "VALUES (:o, 'volume', :e, 'aws.ebs.VolumeReadOps', 'count') RETURNING id"), {"o": org, "e": f"vol-{k}"}
    ).scalar_one() for k in QUEUED]
    _run(connection, migration.downgrade)
    for k, hours in QUEUED.items():
        for h in hours:
            connection.execute(text("INSERT INTO metric_rollup_dirty (series_id, hour_at, org_id) VALUES (:s, :h, :o)"),
                               {"s": sids[k], "h": T0 + h * HOUR, "o": org})

    _run(connection, migration.upgrade)
    runs = connection.execute(text(
        "SELECT series_id, first_hour_at, hours FROM metric_rollup_dirty WHERE org_id = :o"), {"o": org}).all()
    assert sorted(runs) == sorted([(sids[0], T0, 3), (sids[0], T0 + 5 * HOUR, 1), (sids[0], T0 + 7 * HOUR, 2),
                                   (sids[1], T0 + 23 * HOUR, 1)])

    _run(connection, migration.downgrade)
    hours = connection.execute(text("SELECT series_id, hour_at FROM metric_rollup_dirty WHERE org_id = :o"),
                               {"o": org}).all()
    assert sorted(hours) == sorted((sids[k], T0 + h * HOUR) for k, hs in QUEUED.items() for h in hs)
    _run(connection, migration.upgrade)
