"""Roles: viewers read; admins manage sources, clusters and settings; owners manage members."""

from __future__ import annotations

from typing import Any

from helpers import join_with_role, sign_up

CLUSTER = {"name": "prod", "tikv_version": "v8.5.1", "deployment_kind": "tiup"}
AWS = {"name": "main", "auth_kind": "assume_role", "role_arn": "arn:aws:iam::123456789012:role/HeadroomReadOnly",
       "regions": ["us-east-1"]}


def test_viewer_reads_but_cannot_write(client: Any, make_client: Any) -> None:
    owner = sign_up(client)
    assert owner.post("/api/v1/clusters", json=CLUSTER).status_code == 201
    viewer = join_with_role(owner, make_client(), "viewer")
    assert viewer.session["role"] == "viewer"
    listed = viewer.get("/api/v1/clusters")
    assert listed.status_code == 200 and listed.json()["total"] == 1
    denied = viewer.post("/api/v1/clusters", json={**CLUSTER, "name": "other"})
    assert denied.status_code == 403 and denied.json()["error"]["code"] == "forbidden"
    assert viewer.post("/api/v1/sources/aws", json=AWS).status_code == 403
    assert viewer.patch("/api/v1/org", json={"name": "renamed"}).status_code == 403


def test_admin_manages_clusters_and_sources_but_not_members(client: Any, make_client: Any) -> None:
    owner = sign_up(client)
    admin = join_with_role(owner, make_client(), "admin")
    assert admin.post("/api/v1/clusters", json=CLUSTER).status_code == 201
    assert admin.post("/api/v1/sources/aws", json=AWS).status_code == 201
    assert admin.patch("/api/v1/org", json={"name": "Renamed"}).status_code == 200
    invite = admin.post("/api/v1/org/invitations", json={"email": "x@example.com", "role": "viewer"})
    assert invite.status_code == 403
    assert admin.patch(f"/api/v1/org/members/{owner.session['user']['id']}", json={"role": "viewer"}).status_code == 403


def test_owner_manages_members(client: Any, make_client: Any) -> None:
    owner = sign_up(client)
    member = join_with_role(owner, make_client(), "viewer")
    user_id = member.session["user"]["id"]
    promoted = owner.patch(f"/api/v1/org/members/{user_id}", json={"role": "admin"})
    assert promoted.status_code == 200 and promoted.json()["role"] == "admin"
    assert member.get("/api/v1/auth/me").json()["role"] == "admin"
    assert owner.delete(f"/api/v1/org/members/{user_id}").status_code == 204
    assert member.get("/api/v1/auth/me").status_code == 401


def test_last_owner_cannot_be_demoted(client: Any) -> None:
    owner = sign_up(client)
    response = owner.patch(f"/api/v1/org/members/{owner.session['user']['id']}", json={"role": "admin"})
    assert response.status_code == 422 and response.json()["error"]["code"] == "last_owner"


def test_invitation_is_single_use(client: Any, make_client: Any) -> None:
    owner = sign_up(client)
    invite = owner.post("/api/v1/org/invitations", json={"email": "once@example.com", "role": "viewer"}).json()
    token = invite["accept_url"].split("token=")[1]
    body = {"token": token, "password": "correct horse battery", "full_name": "Once"}
    assert make_client().post("/api/v1/auth/accept-invitation", json=body).status_code == 200
    assert make_client().post("/api/v1/auth/accept-invitation", json=body).status_code == 404


def test_audit_log_records_actions(client: Any) -> None:
    owner = sign_up(client)
    owner.post("/api/v1/clusters", json=CLUSTER)
    owner.post("/api/v1/org/tokens", json={"name": "ci"})
    actions = [e["action"] for e in owner.get("/api/v1/org/audit-log").json()]
    assert actions[:2] == ["api_token.created", "cluster.created"]
    assert "org.created" in actions
