"""Migration 4d1c0b7e9a21 drops the first schema's unused digest tables; its downgrade brings them back as the
initial schema (993e3e3a4d0a) made them. Run inside the test's transaction (PostgreSQL DDL is transactional), so
the shared test database keeps its head schema."""

from __future__ import annotations

import importlib.util
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from alembic.migration import MigrationContext
from alembic.operations import Operations
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

VERSIONS = Path(__file__).resolve().parents[3] / "migrations" / "versions"
LEGACY = {"digest_subscriptions", "digests_sent"}


def _migration(revision: str) -> ModuleType:
    path = next(VERSIONS.glob(f"*-{revision}_*.py"))
    spec = importlib.util.spec_from_file_location(f"migration_{revision}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(connection: Any, step: Any) -> None:
    with Operations.context(MigrationContext.configure(connection)):
        step()


def _columns(connection: Any, table: str) -> dict[str, tuple[str, bool]]:
    return {c["name"]: (str(c["type"]), c["nullable"]) for c in inspect(connection).get_columns(table)}


def test_head_has_no_legacy_tables_and_the_models_do_not_name_them(connection: Any) -> None:
    from headroom.platform.orm import Base

    assert LEGACY.isdisjoint(inspect(connection).get_table_names())
    assert LEGACY.isdisjoint(Base.metadata.tables)


def test_downgrade_recreates_them_as_the_initial_schema_did_and_upgrade_drops_them(connection: Any) -> None:
    migration = _migration("4d1c0b7e9a21")
    assert migration.down_revision == "3e7a91c4b2d6"
    _run(connection, migration.downgrade)

    assert _columns(connection, "digest_subscriptions") == {
        "id": ("UUID", False), "org_id": ("UUID", False), "user_id": ("UUID", True),
        "email": ("VARCHAR(320)", False), "enabled": ("BOOLEAN", False),
        "created_at": ("TIMESTAMP", False),
    }
    assert _columns(connection, "digests_sent") == {
        "id": ("UUID", False), "org_id": ("UUID", False), "week_start": ("DATE", False),
        "sent_at": ("TIMESTAMP", False), "recipients": ("INTEGER", False), "findings_count": ("INTEGER", False),
    }
    insp = inspect(connection)
    assert {i["name"] for i in insp.get_indexes("digest_subscriptions") if not i.get("duplicates_constraint")} == {
        "ix_digest_subscriptions_org_id", "ix_digest_subscriptions_user_id"}
    assert {u["name"]: u["column_names"] for u in insp.get_unique_constraints("digests_sent")} == {
        "uq_digests_sent_org_id_week_start": ["org_id", "week_start"]}
    assert {f["name"]: f["options"].get("ondelete") for f in insp.get_foreign_keys("digest_subscriptions")} == {
        "fk_digest_subscriptions_org_id_organizations": "CASCADE",
        "fk_digest_subscriptions_user_id_users": "CASCADE"}

    # server defaults as before: enabled true, timestamps now(); the unique (org, email) holds
    org_id = uuid.uuid4()
    connection.execute(text("INSERT INTO organizations (id, name, slug, aws_external_id) "
                            "VALUES (:id, 'Legacy', :slug, :ext)"),
                       {"id": org_id, "slug": f"legacy-{org_id.hex[:8]}", "ext": f"headroom-{org_id.hex}"})
    connection.execute(text("INSERT INTO digest_subscriptions (id, org_id, email) VALUES (:id, :org, 'a@x.io')"),
                       {"id": uuid.uuid4(), "org": org_id})
    enabled, created = connection.execute(text("SELECT enabled, created_at FROM digest_subscriptions")).one()
    assert enabled is True and created is not None
    with pytest.raises(IntegrityError), connection.begin_nested():
        connection.execute(text("INSERT INTO digest_subscriptions (id, org_id, email) VALUES (:id, :org, 'a@x.io')"),
                           {"id": uuid.uuid4(), "org": org_id})

    _run(connection, migration.upgrade)
    assert LEGACY.isdisjoint(inspect(connection).get_table_names())
