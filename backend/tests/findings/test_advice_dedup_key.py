"""Findings' dedup keys name the cluster by its stable id: renaming a cluster keeps its findings (same rows, same
statuses, none re-opened or resolved), and the migration re-keys findings stored under the name."""

from __future__ import annotations

import datetime as dt
import importlib.util
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

from advice_support import DemoCluster
from headroom.accounts.service import Principal
from headroom.domain.advisor.context import Context as AdvisorContext
from headroom.findings import service
from headroom.findings.models import FindingRecord as FindingRow
from headroom.timeseries.snapshots import build_snapshot
from sqlalchemy import select, text

T0 = dt.datetime(2026, 11, 2, 18, 0, tzinfo=dt.UTC)
MIGRATION = next(
    (Path(__file__).resolve().parents[3] / "migrations" / "versions").glob("*-3e7a91c4b2d6_*.py")
)


def _rows(db: Any, cluster_id: uuid.UUID) -> dict[uuid.UUID, FindingRow]:
    db.expire_all()
    return {r.id: r for r in db.scalars(select(FindingRow).where(FindingRow.cluster_id == cluster_id))}


def _migration() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rekey_migration", MIGRATION)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_snapshot_of_a_stored_cluster_carries_its_id(db: Any, demo_cluster: DemoCluster) -> None:
    cluster = demo_cluster.cluster
    snapshot = build_snapshot(db, cluster.org_id, cluster.id, start=T0 - dt.timedelta(hours=1), end=T0)
    assert snapshot.cluster.id == str(cluster.id) and snapshot.cluster.name == cluster.name
    assert AdvisorContext(snapshot).cluster_key == str(cluster.id)
    # a bare snapshot (CLI, JSON file) has no id: the name is its key, as before
    bare = snapshot.model_copy(update={"cluster": snapshot.cluster.model_copy(update={"id": None})})
    assert AdvisorContext(bare).cluster_key == cluster.name


def test_renaming_a_cluster_keeps_its_findings(db: Any, demo_cluster: DemoCluster) -> None:
    cluster = demo_cluster.cluster
    first = service.advise_cluster(db, cluster, now=T0)
    before = _rows(db, cluster.id)
    assert first.opened == len(before) > 0
    assert all(f"/{cluster.id}/" in r.dedup_key and f"/{cluster.name}/" not in r.dedup_key for r in before.values())
    acknowledged = next(iter(before))
    service.acknowledge(db, Principal(user_id=None, org_id=cluster.org_id, role="admin", via="token"), acknowledged)

    cluster.name = "renamed-" + cluster.name
    db.flush()
    second = service.advise_cluster(db, cluster, now=T0 + dt.timedelta(minutes=5))
    after = _rows(db, cluster.id)

    assert (second.opened, second.reopened, second.resolved, second.updated) == (0, 0, 0, len(before))
    assert set(after) == set(before)  # the same rows: nothing opened under a new key
    assert {r.dedup_key for r in after.values()} == {r.dedup_key for r in before.values()}
    assert after[acknowledged].status == "acknowledged"
    assert all(r.status in ("open", "acknowledged") for r in after.values())


def test_migration_rekeys_findings_stored_under_the_name(db: Any, demo_cluster: DemoCluster) -> None:
    cluster = demo_cluster.cluster
    service.advise_cluster(db, cluster, now=T0)
    rows = _rows(db, cluster.id)
    by_id = {row_id: row.dedup_key for row_id, row in rows.items()}
    # what the store held before this change: the cluster's name in every key
    db.execute(
        text("UPDATE findings SET dedup_key = replace(dedup_key, :id, :name) WHERE cluster_id = :cid"),
        {"id": f"/{cluster.id}/", "name": f"/{cluster.name}/", "cid": cluster.id},
    )
    old_keys = {row_id: row.dedup_key for row_id, row in _rows(db, cluster.id).items()}
    assert all(f"/{cluster.name}/" in key for key in old_keys.values())

    migration = _migration()
    db.execute(text(migration._REKEY.format(old="c.name", new="c.id::text")))
    assert {row_id: row.dedup_key for row_id, row in _rows(db, cluster.id).items()} == by_id

    # the next run finds every finding where it was
    again = service.advise_cluster(db, cluster, now=T0 + dt.timedelta(minutes=5))
    assert (again.opened, again.resolved) == (0, 0) and set(_rows(db, cluster.id)) == set(rows)

    # and the downgrade writes the names back
    db.execute(text(migration._REKEY.format(old="c.id::text", new="c.name")))
    assert {row_id: row.dedup_key for row_id, row in _rows(db, cluster.id).items()} == old_keys
