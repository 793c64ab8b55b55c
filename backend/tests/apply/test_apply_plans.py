"""Plans before anything runs (docs/apply.md), through the API on real PostgreSQL: a finding's fix becomes steps
in order, one volume or one TiKV node at a time, with the guards, the predicted effect and cost (the finding's own
what-if numbers) and when each step can be undone. Refused, each with a reason in words: an organisation or a
cluster not opted in, a viewer proposing, anyone approving their own plan, a TiKV key that is not online on the
nodes' version, and a fix that needs a restart or an instance stop. Every proposal and decision is audit-logged."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from headroom.domain.model import Change, EntityRef, Impact
from headroom.findings.models import FindingRecord, Recommendation
from helpers import join_with_role, sign_up

T0 = dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)
ROLE = "arn:aws:iam::123456789012:role/HeadroomApply"
GP3 = Change(target="aws", key="volume.type", entity=EntityRef(kind="volume", id="vol-0data1"), current="gp2",
             proposed="gp3", online=True, reason="sustained IOPS")
IMPACT = Impact(summary="headroom 2% -> 50%", metric="sustained IOPS ceiling", unit="IOPS", before=3000.0,
                after=3000.0, headroom_before_pct=2.0, headroom_after_pct=50.0, monthly_cost_before_usd=10.0,
                monthly_cost_after_usd=8.0, monthly_cost_delta_usd=-2.0)


def _cluster(owner: Any, version: str = "v8.5.1", nodes: int = 2) -> str:
    response = owner.post("/api/v1/clusters", json={"name": f"c-{uuid.uuid4().hex[:6]}", "tikv_version": version})
    assert response.status_code == 201, response.text
    cid = str(response.json()["id"])
    for i in range(nodes, 0, -1):  # created out of order: the plan orders them by address
        node = owner.post(f"/api/v1/clusters/{cid}/nodes", json={
            "store_address": f"10.0.1.{i}:20160", "status_address": f"10.0.1.{i}:20180", "version": version})
        assert node.status_code == 201, node.text
    return cid


def _finding(db: Any, owner: Any, cid: str, changes: list[Change], impact: Impact | None = IMPACT) -> str:
    row = FindingRecord(org_id=uuid.UUID(owner.org_id), cluster_id=uuid.UUID(cid), rule="probe",
                        entity_kind="volume", entity_id="vol-0data1", severity="warning", title="IOPS near the ceiling",
                        dedup_key=f"probe:{uuid.uuid4().hex}", impact=impact, first_seen_at=T0, last_seen_at=T0)
    db.add(row)
    db.flush()
    db.add_all(Recommendation(org_id=row.org_id, finding_id=row.id, position=i, change=c)
               for i, c in enumerate(changes))
    db.commit()
    return str(row.id)


def _opt_in(owner: Any, cid: str, *, role: str | None = ROLE) -> None:
    assert owner.put("/api/v1/org/apply-settings", json={"enabled": True, "role_arn": role,
                                                         "volume_tag_key": "headroom-apply"}).status_code == 200
    assert owner.put(f"/api/v1/clusters/{cid}/apply-settings", json={"enabled": True}).status_code == 200


def _propose(actor: Any, cid: str, fid: str, **extra: Any) -> Any:
    return actor.post(f"/api/v1/clusters/{cid}/apply-plans", json={"finding_id": fid, **extra})


def test_a_volume_fix_is_one_step_undone_after_six_hours_and_approved_by_someone_else(
        client: Any, make_client: Any, db: Any) -> None:
    owner = sign_up(client)
    admin = join_with_role(owner, make_client(), "admin")
    cid = _cluster(owner)
    fid = _finding(db, owner, cid, [GP3])
    _opt_in(owner, cid)
    preview = admin.get(f"/api/v1/findings/{fid}/apply-plan").json()
    assert preview["blocked"] == []
    [step] = preview["steps"]
    assert (step["position"], step["kind"], step["target"]) == (1, "ebs_modify_volume", "vol-0data1")
    assert (step["change"]["proposed"], step["undo"]["proposed"]) == ("gp3", "gp2")
    # AWS: one modification per volume every six hours (docs/reference/ebs-modify.md#six-hours)
    assert step["undo_after_seconds"] == 6 * 3600
    assert preview["predicted"]["monthly_cost_delta_usd"] == -2.0  # the finding's own what-if numbers
    assert [g["metric"] for g in preview["guards"]][-3:] == [
        "derived.read_latency_ms", "derived.write_latency_ms", "tikv.wait.scheduler_latch"]

    window = {"start": "22:00", "end": "02:00", "weekdays": ["sat", "sun"]}
    proposed = _propose(admin, cid, fid, maintenance_window=window)
    assert proposed.status_code == 201, proposed.text
    plan = proposed.json()
    assert (plan["status"], plan["maintenance_window"], plan["step_runs"][0]["status"]) == (
        "proposed", window, "pending")
    assert plan["proposed_by"] == admin.session["user"]["email"]

    # the proposer cannot approve it
    own = admin.post(f"/api/v1/apply-plans/{plan['id']}/approve", json={})
    assert own.status_code == 403 and "another owner or admin" in own.json()["error"]["message"]
    approved = owner.post(f"/api/v1/apply-plans/{plan['id']}/approve", json={"note": "go"})
    assert approved.status_code == 200, approved.text
    assert (approved.json()["status"], approved.json()["decided_by"]) == ("approved", owner.session["user"]["email"])
    assert owner.post(f"/api/v1/apply-plans/{plan['id']}/approve", json={}).status_code == 409

    actions = [e["action"] for e in owner.get("/api/v1/org/audit-log").json()]
    assert actions[:2] == ["apply.plan_approved", "apply.plan_proposed"]


def test_an_owner_cannot_approve_their_own_plan_but_a_second_admin_can(client: Any, make_client: Any,
                                                                        db: Any) -> None:
    owner = sign_up(client)
    admin = join_with_role(owner, make_client(), "admin")
    cid = _cluster(owner)
    _opt_in(owner, cid)
    plan = _propose(owner, cid, _finding(db, owner, cid, [GP3])).json()
    assert owner.post(f"/api/v1/apply-plans/{plan['id']}/approve", json={}).status_code == 403
    assert admin.post(f"/api/v1/apply-plans/{plan['id']}/approve", json={}).json()["status"] == "approved"


def test_not_opted_in_is_refused_for_the_org_and_for_the_cluster(client: Any, db: Any) -> None:
    owner = sign_up(client)
    cid = _cluster(owner)
    fid = _finding(db, owner, cid, [GP3])
    refused = _propose(owner, cid, fid)
    assert refused.status_code == 403
    assert "turned off for your organisation" in refused.json()["error"]["message"]
    owner.put("/api/v1/org/apply-settings", json={"enabled": True, "role_arn": ROLE})
    refused = _propose(owner, cid, fid)
    assert refused.status_code == 403 and "turned off for this cluster" in refused.json()["error"]["message"]
    assert owner.get(f"/api/v1/clusters/{cid}/apply-plans").json() == []


def test_turning_apply_off_stops_approval(client: Any, make_client: Any, db: Any) -> None:
    owner = sign_up(client)
    admin = join_with_role(owner, make_client(), "admin")
    cid = _cluster(owner)
    _opt_in(owner, cid)
    plan = _propose(admin, cid, _finding(db, owner, cid, [GP3])).json()
    owner.put(f"/api/v1/clusters/{cid}/apply-settings", json={"enabled": False})
    refused = owner.post(f"/api/v1/apply-plans/{plan['id']}/approve", json={})
    assert refused.status_code == 403 and "this cluster" in refused.json()["error"]["message"]


def test_a_viewer_cannot_propose_or_approve(client: Any, make_client: Any, db: Any) -> None:
    owner = sign_up(client)
    viewer = join_with_role(owner, make_client(), "viewer")
    cid = _cluster(owner)
    _opt_in(owner, cid)
    fid = _finding(db, owner, cid, [GP3])
    assert _propose(viewer, cid, fid).status_code == 403
    plan = _propose(owner, cid, fid).json()
    assert viewer.post(f"/api/v1/apply-plans/{plan['id']}/approve", json={}).status_code == 403
    assert viewer.get(f"/api/v1/apply-plans/{plan['id']}").json()["status"] == "proposed"


def test_online_keys_become_one_step_per_node_in_address_order(client: Any, db: Any) -> None:
    owner = sign_up(client)
    cid = _cluster(owner, nodes=3)
    _opt_in(owner, cid, role=None)  # TiKV keys need no AWS role
    key = Change(target="tikv", key="storage.block-cache.capacity", current="8GiB", proposed="12GiB", online=True)
    plan = _propose(owner, cid, _finding(db, owner, cid, [key])).json()
    assert [(s["position"], s["kind"], s["target"], s["undo_after_seconds"]) for s in plan["steps"]] == [
        (1, "tikv_online_config", "10.0.1.1:20180", 0),
        (2, "tikv_online_config", "10.0.1.2:20180", 0),
        (3, "tikv_online_config", "10.0.1.3:20180", 0),
    ]
    assert all(s["undo"]["proposed"] == "8GiB" for s in plan["steps"])
    assert len(plan["step_runs"]) == 3


@pytest.mark.parametrize(("change", "version", "words"), [
    # TiKV source: block-size is #[online_config(skip)] (docs/reference/tikv-config.md#online-changes)
    (Change(target="tikv", key="rocksdb.defaultcf.block-size", current="32KiB", proposed="64KiB"), "v8.5.1",
     "rocksdb.defaultcf.block-size cannot be changed online"),
    # online only from v6.0.0 (domain/tikvconf/online.py ONLINE_SINCE)
    (Change(target="tikv", key="storage.scheduler-worker-pool-size", current=4, proposed=8), "v5.4.0",
     "needs a rolling restart"),
    (Change(target="aws", key="instance.type", entity=EntityRef(kind="instance", id="i-0abc"), current="r5.2xlarge",
            proposed="r6i.2xlarge"), "v8.5.1", "stops and starts the instance"),
    (Change(target="aws", key="volume.size", entity=EntityRef(kind="volume", id="vol-0data1"), current=500,
            proposed=1000), "v8.5.1", "can never be made smaller"),
])
def test_restarts_stops_and_offline_keys_are_refused_with_a_plain_reason(
        client: Any, db: Any, change: Change, version: str, words: str) -> None:
    owner = sign_up(client)
    cid = _cluster(owner, version=version)
    _opt_in(owner, cid)
    fid = _finding(db, owner, cid, [GP3, change])  # half a fix is not the fix: the whole plan is refused
    preview = owner.get(f"/api/v1/findings/{fid}/apply-plan").json()
    assert [r["key"] for r in preview["refusals"]] == [change.key]
    assert words in preview["refusals"][0]["reason"]
    refused = _propose(owner, cid, fid)
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["message"].startswith("Finding: ") and words in error["message"]
    assert "None" not in error["message"] and "docs/" not in error["message"]
    assert owner.get(f"/api/v1/clusters/{cid}/apply-plans").json() == []


def test_a_second_proposal_for_the_same_finding_is_refused_until_the_first_is_rejected(
        client: Any, make_client: Any, db: Any) -> None:
    owner = sign_up(client)
    admin = join_with_role(owner, make_client(), "admin")
    cid = _cluster(owner)
    _opt_in(owner, cid)
    fid = _finding(db, owner, cid, [GP3])
    first = _propose(admin, cid, fid).json()
    again = _propose(owner, cid, fid)
    assert again.status_code == 422 and "already waiting" in again.json()["error"]["message"]
    rejected = owner.post(f"/api/v1/apply-plans/{first['id']}/reject", json={"note": "not this week"})
    assert rejected.json()["status"] == "rejected"
    assert _propose(owner, cid, fid).status_code == 201
    assert "apply.plan_rejected" in [e["action"] for e in owner.get("/api/v1/org/audit-log").json()]


@pytest.mark.parametrize("window", [
    {"start": "25:00", "end": "02:00", "weekdays": ["sat"]},
    {"start": "01:00", "end": "01:00", "weekdays": ["sat"]},
    {"start": "01:00", "end": "02:00", "weekdays": []},
    {"start": "01:00", "end": "02:00", "weekdays": ["saturday"]},
])
def test_a_bad_maintenance_window_is_a_422_in_words(client: Any, db: Any, window: dict[str, Any]) -> None:
    owner = sign_up(client)
    cid = _cluster(owner)
    _opt_in(owner, cid)
    response = _propose(owner, cid, _finding(db, owner, cid, [GP3]), maintenance_window=window)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["message"].startswith("Maintenance window"), response.json()


def test_volume_changes_need_the_write_role(client: Any, db: Any) -> None:
    owner = sign_up(client)
    cid = _cluster(owner)
    _opt_in(owner, cid, role=None)
    refused = _propose(owner, cid, _finding(db, owner, cid, [GP3]))
    assert refused.status_code == 422 and "No write role" in refused.json()["error"]["message"]
