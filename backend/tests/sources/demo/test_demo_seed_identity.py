"""The demo cluster is identified by a flag only seeding sets, not by anything its users can edit:
clearing its tags or renaming it through the API must not make the next start insert a second demo
cluster (or fail on the org's unique cluster name)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from headroom.clusters.models import Cluster
from headroom.sources.demo import service as demo
from helpers import Actor
from sqlalchemy import func, select


def _log_in_as_demo(client: Any, password: str) -> Actor:
    response = client.post("/api/v1/auth/login", json={"email": demo.DEMO_EMAIL, "password": password})
    assert response.status_code == 200, response.text
    return Actor(client, response.json())


def _clusters(db: Any, org_id: uuid.UUID) -> list[tuple[uuid.UUID, str, bool]]:
    rows = db.execute(select(Cluster.id, Cluster.name, Cluster.is_demo).where(Cluster.org_id == org_id)).all()
    return sorted((r.id, r.name, r.is_demo) for r in rows)


def test_demo_user_editing_the_demo_cluster_does_not_break_the_next_start(
    db: Any, client: Any, tmp_path: Path
) -> None:
    password_file = tmp_path / "demo-password.txt"
    _, password, org_id = demo.ensure_demo_account(db, password_file)  # what `headroom up` does at start
    db.commit()
    seeded = db.scalar(select(Cluster).where(Cluster.org_id == org_id))
    assert seeded is not None and seeded.is_demo and seeded.tags[demo.DEMO_TAG] == "true"
    seeded_id, seeded_name = seeded.id, seeded.name
    user = _log_in_as_demo(client, password)

    # Clear the tags (the old identity) through the API, then start again.
    cleared = user.patch(f"/api/v1/clusters/{seeded_id}", json={"tags": {}})
    assert cleared.status_code == 200, cleared.text
    assert cleared.json()["tags"] == {} and cleared.json()["is_demo"] is True  # the badge follows is_demo
    db.expire_all()
    assert demo.ensure_demo_account(db, password_file)[2] == org_id
    db.commit()
    assert _clusters(db, org_id) == [(seeded_id, seeded_name, True)]

    # Rename it too, and take its old name for another cluster: still the same single demo cluster.
    renamed = user.patch(f"/api/v1/clusters/{seeded_id}", json={"name": "my cluster"})
    assert renamed.status_code == 200, renamed.text
    other = user.post("/api/v1/clusters", json={"name": seeded_name, "tikv_version": "v8.5.1",
                                                "tags": {demo.DEMO_TAG: "true"}})
    assert other.status_code == 201, other.text
    db.expire_all()
    assert demo.seed_demo_cluster(db, org_id).id == seeded_id
    db.commit()
    other_id = uuid.UUID(other.json()["id"])
    assert _clusters(db, org_id) == sorted([(seeded_id, "my cluster", True), (other_id, seeded_name, False)])
    # A user's tag does not make their cluster a demo one (the demo ingest would write simulated data into it).
    assert [c.id for c in demo.demo_clusters(db) if c.org_id == org_id] == [seeded_id]
    listed = {c["id"]: c["is_demo"] for c in user.get("/api/v1/clusters").json()["items"]}
    assert listed == {str(seeded_id): True, str(other_id): False}


def test_a_deleted_demo_cluster_is_seeded_again_under_a_free_name(db: Any, client: Any, tmp_path: Path) -> None:
    password_file = tmp_path / "demo-password.txt"
    _, password, org_id = demo.ensure_demo_account(db, password_file)
    db.commit()
    seeded = db.scalar(select(Cluster).where(Cluster.org_id == org_id, Cluster.is_demo))
    assert seeded is not None
    seeded_id, seeded_name = seeded.id, seeded.name
    user = _log_in_as_demo(client, password)
    assert user.delete(f"/api/v1/clusters/{seeded_id}").status_code == 204
    taken = user.post("/api/v1/clusters", json={"name": seeded_name, "tikv_version": "v8.5.1"})
    assert taken.status_code == 201, taken.text
    db.expire_all()

    again = demo.seed_demo_cluster(db, org_id)
    db.commit()
    assert again.is_demo and again.id != seeded_id and again.name == f"{seeded_name} 2"
    count = db.scalar(select(func.count()).select_from(Cluster).where(Cluster.org_id == org_id, Cluster.is_demo))
    assert count == 1
