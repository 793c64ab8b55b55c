"""Who may revoke an API token, and accepting an invitation when you are already a member."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from helpers import PASSWORD, join_with_role, sign_up


def test_an_admin_cannot_revoke_the_owners_token(client: Any, make_client: Any) -> None:
    owner = sign_up(client)
    created = owner.post("/api/v1/org/tokens", json={"name": "owner-ci", "role": "admin"})
    assert created.status_code == 201
    token_id, plaintext = created.json()["id"], created.json()["token"]
    admin = join_with_role(owner, make_client(), "admin")

    denied = admin.delete(f"/api/v1/org/tokens/{token_id}")
    assert denied.status_code == 403
    error = denied.json()["error"]
    assert error["code"] == "forbidden"
    assert "owner" in error["message"] and "created" in error["message"]
    # The token still works and is not marked revoked.
    robot = make_client()
    assert robot.get("/api/v1/clusters", headers={"Authorization": f"Bearer {plaintext}"}).status_code == 200
    assert [t["revoked_at"] for t in owner.get("/api/v1/org/tokens").json()] == [None]

    assert owner.delete(f"/api/v1/org/tokens/{token_id}").status_code == 200
    assert robot.get("/api/v1/clusters", headers={"Authorization": f"Bearer {plaintext}"}).status_code == 401


def test_an_admin_revokes_their_own_and_other_admins_tokens_and_the_owner_any(client: Any, make_client: Any) -> None:
    owner = sign_up(client)
    admin = join_with_role(owner, make_client(), "admin")
    other_admin = join_with_role(owner, make_client(), "admin")
    own = admin.post("/api/v1/org/tokens", json={"name": "mine", "role": "viewer"}).json()
    theirs = other_admin.post("/api/v1/org/tokens", json={"name": "theirs", "role": "admin"}).json()
    third = other_admin.post("/api/v1/org/tokens", json={"name": "third", "role": "viewer"}).json()

    assert admin.delete(f"/api/v1/org/tokens/{own['id']}").status_code == 200
    assert admin.delete(f"/api/v1/org/tokens/{theirs['id']}").status_code == 200
    assert owner.delete(f"/api/v1/org/tokens/{third['id']}").status_code == 200


def test_accepting_a_second_invitation_as_a_member_is_a_clear_conflict(client: Any, make_client: Any) -> None:
    owner = sign_up(client)
    email = "twice@example.com"
    first = owner.post("/api/v1/org/invitations", json={"email": email, "role": "viewer"}).json()
    second = owner.post("/api/v1/org/invitations", json={"email": email, "role": "admin"}).json()
    token_1, token_2 = (i["accept_url"].split("token=")[1] for i in (first, second))
    # the link opens the front end's invitation page (frontend/route-paths.json, kept equal to its router)
    pages = json.loads((Path(__file__).resolve().parents[3] / "frontend" / "route-paths.json").read_text())["paths"]
    assert urlsplit(first["accept_url"]).path in pages
    body = {"password": PASSWORD, "full_name": "Twice"}

    joined = make_client().post("/api/v1/auth/accept-invitation", json={**body, "token": token_1})
    assert joined.status_code == 200, joined.text

    for _ in range(2):  # the same answer every time, never a 500
        again = make_client().post("/api/v1/auth/accept-invitation", json={**body, "token": token_2})
        assert again.status_code == 409, again.text
        assert again.json()["error"]["code"] == "already_member"
        assert "already a member" in again.json()["error"]["message"]

    # Nothing is left half-done: one membership with the first invitation's role, and no invitation to the
    # same address left open (joining revokes the others).
    members = [m for m in owner.get("/api/v1/org/members").json() if m["email"] == email]
    assert [m["role"] for m in members] == ["viewer"]
    pending = [i for i in owner.get("/api/v1/org/invitations").json() if i["revoked_at"] is None]
    assert pending == []
    # The member still logs in normally.
    assert make_client().post("/api/v1/auth/login", json={"email": email, "password": PASSWORD}).status_code == 200
