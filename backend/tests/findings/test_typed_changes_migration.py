"""Migration c81f3a6d2b47 turns the flattened recommendation rows and the patches' tikvconf-shaped changes into
domain Changes, in SQL; its downgrade gives the old rows back. Run inside the test's transaction (PostgreSQL DDL
is transactional), so the shared test database keeps its head schema."""

from __future__ import annotations

import importlib.util
import json
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

from alembic.migration import MigrationContext
from alembic.operations import Operations
from headroom.domain.model import Change, EntityRef
from headroom.domain.tikvconf import Patch, PatchTarget, artefact, target_node
from sqlalchemy import text

VERSIONS = Path(__file__).resolve().parents[3] / "migrations" / "versions"
FINDING_KEY = "block-cache-size/c1/node:10.0.1.5:20160"

# (target, key, entity string, current, proposed, online, reason) as the flattened rows held them
OLD_RECOMMENDATIONS = [
    ("tikv", "storage.block-cache.capacity", "10.0.1.5:20180", "14GiB", "4GiB", True, "smaller cache"),
    ("aws", "volume.iops", "vol-0aaa", 3000, 6000, True, "more IOPS"),
    ("aws", "instance.type", "i-0bbb", "m5.2xlarge", "m6i.2xlarge", False, "newer instance"),
    ("tikv", "raftstore.apply-pool-size", None, None, 3, True, "every node"),
]
# A patch's changes as tikvconf's Change stored them (finding reference, tikvconf entity)
OLD_PATCH_CHANGES = [
    {"target": "tikv", "key": "storage.block-cache.capacity", "current": "14GiB", "proposed": "4GiB", "online": True,
     "reason": "smaller cache", "finding": {"rule": "block-cache-size", "dedup_key": FINDING_KEY, "title": "t"},
     "entity": {"node": "10.0.1.5:20180", "store_address": None, "volume_id": None, "instance_id": None}},
    {"target": "aws", "key": "volume.iops", "current": 3000, "proposed": 6000, "online": True, "reason": "more IOPS",
     "finding": {"rule": "block-cache-size", "dedup_key": FINDING_KEY, "title": "t"},
     "entity": {"node": None, "store_address": None, "volume_id": "vol-0aaa", "instance_id": None}},
]


def _migration() -> ModuleType:
    path = next(VERSIONS.glob("*-c81f3a6d2b47_*.py"))
    spec = importlib.util.spec_from_file_location("migration_c81f3a6d2b47", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(connection: Any, step: Any) -> None:
    with Operations.context(MigrationContext.configure(connection)):
        step()


def _seed_old_rows(connection: Any) -> tuple[uuid.UUID, uuid.UUID]:
    org, cluster, finding, patch = (uuid.uuid4() for _ in range(4))
    connection.execute(text("INSERT INTO organizations (id, name, slug, aws_external_id) VALUES (:id, 'M', :s, :e)"),
                       {"id": org, "s": f"m-{org.hex[:8]}", "e": f"headroom-{org.hex}"})
    connection.execute(text("INSERT INTO clusters (id, org_id, name, tikv_version, deployment_kind) "
                            "VALUES (:id, :org, 'c1', 'v8.5.1', 'tiup')"), {"id": cluster, "org": org})
    connection.execute(text(
        "INSERT INTO findings (id, org_id, cluster_id, rule, entity_kind, entity_id, severity, status, title, why, "
        "evidence, impact, confidence, dedup_key, first_seen_at, last_seen_at) VALUES (:id, :org, :c, "
        "'block-cache-size', 'tikv_node', '10.0.1.5:20160', 'warning', 'open', 't', '', '{}', '{}', 0.5, :k, "
        "now(), now())"), {"id": finding, "org": org, "c": cluster, "k": FINDING_KEY})
    for position, (target, key, entity, current, proposed, online, reason) in enumerate(OLD_RECOMMENDATIONS):
        connection.execute(text(
            "INSERT INTO recommendations (id, org_id, finding_id, position, target, key, entity, current, proposed, "
            "online, reason) VALUES (:id, :org, :f, :p, :t, :k, :e, CAST(:cur AS jsonb), CAST(:prop AS jsonb), :on, "
            ":r)"), {"id": uuid.uuid4(), "org": org, "f": finding, "p": position, "t": target, "k": key, "e": entity,
                     "cur": None if current is None else json.dumps(current), "prop": json.dumps(proposed),
                     "on": online, "r": reason})
    connection.execute(text(
        "INSERT INTO patches (id, org_id, cluster_id, finding_ids, changes, notes) "
        "VALUES (:id, :org, :c, ARRAY[CAST(:f AS uuid)], CAST(:ch AS jsonb), '[]')"),
        {"id": patch, "org": org, "c": cluster, "f": str(finding), "ch": json.dumps(OLD_PATCH_CHANGES)})
    return finding, patch


def _old_recommendations(connection: Any, finding: uuid.UUID) -> list[tuple[Any, ...]]:
    rows = connection.execute(text("SELECT target, key, entity, current, proposed, online, reason FROM "
                                   "recommendations WHERE finding_id = :f ORDER BY position"), {"f": finding})
    return [tuple(r) for r in rows]


def test_upgrade_stores_domain_changes_and_downgrade_gives_the_old_rows_back(connection: Any) -> None:
    migration = _migration()
    assert migration.down_revision == "a4d92c7e1f05"
    _run(connection, migration.downgrade)
    finding, patch = _seed_old_rows(connection)
    assert _old_recommendations(connection, finding) == OLD_RECOMMENDATIONS

    _run(connection, migration.upgrade)
    changes = [Change.model_validate(c) for (c,) in connection.execute(
        text("SELECT change FROM recommendations WHERE finding_id = :f ORDER BY position"), {"f": finding})]
    node = EntityRef(kind="node", id="10.0.1.5:20160")
    assert [(c.target, c.key, c.current, c.proposed, c.online, c.reason) for c in changes] == [
        (t, k, cur, prop, on, r) for t, k, _, cur, prop, on, r in OLD_RECOMMENDATIONS]
    # the finding's entity, the old string where the patcher looked for it
    assert [c.entity for c in changes] == [
        node.model_copy(update={"status_address": "10.0.1.5:20180"}),
        node.model_copy(update={"volume_id": "vol-0aaa"}),
        node.model_copy(update={"instance_id": "i-0bbb"}),
        node,
    ]
    assert [c.applies_to() for c in changes] == ["10.0.1.5:20180", "vol-0aaa", "i-0bbb", "10.0.1.5:20160"]

    stored, sources = connection.execute(text("SELECT changes, change_sources FROM patches WHERE id = :p"),
                                         {"p": patch}).one()
    patch_changes = [Change.model_validate(c) for c in stored]
    assert sources == [FINDING_KEY, FINDING_KEY]
    assert [target_node(c) for c in patch_changes] == ["10.0.1.5:20180", None]
    assert patch_changes[1].applies_to() == "vol-0aaa"
    nodes = tuple(PatchTarget(status_address=f"10.0.1.{i}:20180", address=f"10.0.1.{i}:20160") for i in (5, 6))
    rendered = Patch(cluster="c1", nodes=nodes, changes=tuple(patch_changes), sources=tuple(sources))
    sql = artefact(rendered, "sql").body
    assert "SET CONFIG \"10.0.1.5:20180\" `storage.block-cache.capacity` = '4GiB';" in sql
    assert '(was "14GiB")' in sql and FINDING_KEY not in sql  # no title given: the previous value alone
    assert "--volume-id vol-0aaa --iops 6000" in artefact(rendered, "aws").body

    _run(connection, migration.downgrade)
    # a row without an entity string meant its finding's node (the patcher inherited it): now it says so
    assert _old_recommendations(connection, finding) == [
        *OLD_RECOMMENDATIONS[:3], ("tikv", "raftstore.apply-pool-size", "10.0.1.5:20160", None, 3, True, "every node")]
    (old_patch,) = connection.execute(text("SELECT changes FROM patches WHERE id = :p"), {"p": patch}).one()
    assert [{k: c[k] for k in ("target", "key", "current", "proposed", "online", "reason")} for c in old_patch] == [
        {k: c[k] for k in ("target", "key", "current", "proposed", "online", "reason")} for c in OLD_PATCH_CHANGES]
    assert [c["entity"] for c in old_patch] == [c["entity"] for c in OLD_PATCH_CHANGES]
    assert [c["finding"]["dedup_key"] for c in old_patch] == [FINDING_KEY, FINDING_KEY]
    _run(connection, migration.upgrade)
