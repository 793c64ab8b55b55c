"""Tenancy cases for apply (docs/apply.md): the opt-in switches, the write role's templates, a finding's plan
preview and the plans. `seed` turns apply on in org A, gives its cluster a TiKV node and a finding whose fix is an
online key, and proposes its plan, so org B's walk addresses a real plan id."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

BODIES: dict[tuple[str, str], Any] = {
    ("PUT", "/api/v1/org/apply-settings"): {"enabled": False},
    ("PUT", "/api/v1/clusters/{cluster_id}/apply-settings"): {"enabled": True},
    ("POST", "/api/v1/clusters/{cluster_id}/apply-plans"): {"finding_id": str(uuid.UUID(int=1))},
    ("POST", "/api/v1/apply-plans/{plan_id}/approve"): {},
    ("POST", "/api/v1/apply-plans/{plan_id}/reject"): {},
    # the run's controls take no body: another org's plan is a 404 before anything runs, stops or is undone
    ("POST", "/api/v1/apply-plans/{plan_id}/run"): {},
    ("POST", "/api/v1/apply-plans/{plan_id}/stop"): {},
    ("POST", "/api/v1/apply-plans/{plan_id}/undo"): {},
    # the org-wide kill switch acts on the caller's own org only: org B stops nothing of org A's
    ("POST", "/api/v1/org/apply-stop"): None,
}


def seed(owner: Any, make_client: Any, ids: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    from headroom.domain.model import Change
    from headroom.findings.models import FindingRecord, Recommendation

    cid = ids["cluster_id"]
    assert owner.put("/api/v1/org/apply-settings", json={"enabled": True}).status_code == 200
    assert owner.put(f"/api/v1/clusters/{cid}/apply-settings", json={"enabled": True}).status_code == 200
    node = owner.post(f"/api/v1/clusters/{cid}/nodes", json={"store_address": "10.9.9.9:20160",
                                                             "status_address": "10.9.9.9:20180"})
    assert node.status_code == 201, node.text
    now = dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)
    with owner.client.app.state.ctx.sessions() as db:
        row = FindingRecord(org_id=uuid.UUID(owner.org_id), cluster_id=uuid.UUID(cid), rule="apply-probe",
                            entity_kind="cluster", entity_id=cid, severity="warning", title="a-secret-apply-finding",
                            dedup_key="apply-probe:a", first_seen_at=now, last_seen_at=now)
        db.add(row)
        db.flush()
        db.add(Recommendation(org_id=row.org_id, finding_id=row.id, position=0,
                              change=Change(target="tikv", key="storage.block-cache.capacity", current="8GiB",
                                            proposed="12GiB")))
        db.commit()
        finding_id = str(row.id)
    plan = owner.post(f"/api/v1/clusters/{cid}/apply-plans", json={"finding_id": finding_id})
    assert plan.status_code == 201, plan.text
    return {"plan_id": plan.json()["id"]}, [plan.json()["id"], finding_id, "a-secret-apply-finding", "10.9.9.9"]
