"""Sign-up, log-in, sessions, CSRF, API tokens and rate limits through the real API on a real database."""

from __future__ import annotations

from typing import Any

from helpers import PASSWORD, sign_up, signup_link_token


def test_signup_creates_org_owner_and_logs_in(client: Any) -> None:
    actor = sign_up(client, org="Acme Storage", email="Ada@Example.com")
    assert actor.session["role"] == "owner"
    assert actor.session["organization"]["slug"] == "acme-storage"
    me = client.get("/api/v1/auth/me")
    assert me.status_code == 200
    assert me.json()["user"]["email"] == "Ada@example.com"  # domains are case-insensitive (RFC 5321)


def test_session_cookie_flags(client: Any) -> None:
    body = {"email": "c@example.com", "password": PASSWORD, "organization_name": "C"}
    assert client.post("/api/v1/auth/signup", json=body).status_code == 202
    response = client.post("/api/v1/auth/signup/confirm", json={"token": signup_link_token(client, "c@example.com")})
    cookies = response.headers.get_list("set-cookie")
    session = next(c for c in cookies if c.startswith("headroom_session="))
    csrf = next(c for c in cookies if c.startswith("headroom_csrf="))
    assert "HttpOnly" in session and "SameSite=lax" in session
    assert "HttpOnly" not in csrf
    assert "Secure" not in session  # plain http in tests


def test_secure_cookie_behind_https(client: Any, settings: Any) -> None:
    settings.public_url = "https://headroom.example.com"
    body = {"email": "s@example.com", "password": PASSWORD, "organization_name": "S"}
    assert client.post("/api/v1/auth/signup", json=body).status_code == 202
    response = client.post("/api/v1/auth/signup/confirm", json={"token": signup_link_token(client, "s@example.com")})
    session = next(c for c in response.headers.get_list("set-cookie") if c.startswith("headroom_session="))
    assert "Secure" in session


def test_logout_ends_the_session(client: Any) -> None:
    actor = sign_up(client)
    assert actor.post("/api/v1/auth/logout").status_code == 204
    assert client.get("/api/v1/auth/me").status_code == 401


def test_logout_revokes_the_server_side_session(client: Any, make_client: Any) -> None:
    sign_up(client)
    stolen_cookie = client.cookies.get("headroom_session")
    csrf = client.cookies.get("headroom_csrf")
    assert client.post("/api/v1/auth/logout", headers={"X-CSRF-Token": csrf}).status_code == 204
    replay = make_client()
    replay.cookies.set("headroom_session", stolen_cookie)
    assert replay.get("/api/v1/auth/me").status_code == 401


def test_login_answers_the_same_for_unknown_user_and_wrong_password(client: Any, make_client: Any) -> None:
    sign_up(client, email="known@example.com")
    anon = make_client()
    wrong = anon.post("/api/v1/auth/login", json={"email": "known@example.com", "password": "not the password"})
    unknown = anon.post("/api/v1/auth/login", json={"email": "nobody@example.com", "password": "not the password"})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json()
    ok = anon.post("/api/v1/auth/login", json={"email": "KNOWN@example.com", "password": PASSWORD})
    assert ok.status_code == 200
    assert anon.get("/api/v1/auth/me").json()["user"]["email"] == "known@example.com"


def test_login_is_rate_limited_per_account_and_ip(client: Any, make_client: Any, settings: Any) -> None:
    sign_up(client, email="target@example.com")
    attacker = make_client()
    codes = [
        attacker.post("/api/v1/auth/login", json={"email": "target@example.com", "password": f"guess-{i}"}).status_code
        for i in range(settings.login_rate_per_account_ip + 1)
    ]
    assert codes[:-1] == [401] * settings.login_rate_per_account_ip
    assert codes[-1] == 429
    blocked = attacker.post("/api/v1/auth/login", json={"email": "target@example.com", "password": PASSWORD})
    assert blocked.status_code == 429
    assert blocked.json()["error"]["code"] == "rate_limited"
    assert int(blocked.headers["Retry-After"]) > 0


def test_login_is_rate_limited_per_ip_across_accounts(client: Any, settings: Any) -> None:
    settings.login_rate_per_ip = 3
    codes = [
        client.post("/api/v1/auth/login", json={"email": f"spray{i}@example.com", "password": "x" * 12}).status_code
        for i in range(4)
    ]
    assert codes == [401, 401, 401, 429]


def test_cookie_writes_need_the_csrf_header(client: Any) -> None:
    sign_up(client)
    body = {"name": "prod", "tikv_version": "v8.5.1", "deployment_kind": "tiup"}
    missing = client.post("/api/v1/clusters", json=body)
    assert missing.status_code == 403 and missing.json()["error"]["code"] == "csrf_failed"
    wrong = client.post("/api/v1/clusters", json=body, headers={"X-CSRF-Token": "0" * 64})
    assert wrong.status_code == 403
    right = client.post("/api/v1/clusters", json=body, headers={"X-CSRF-Token": client.cookies["headroom_csrf"]})
    assert right.status_code == 201


def test_api_token_is_shown_once_and_authenticates_without_csrf(client: Any, make_client: Any) -> None:
    owner = sign_up(client)
    created = owner.post("/api/v1/org/tokens", json={"name": "ci", "role": "admin"})
    assert created.status_code == 201
    token = created.json()["token"]
    assert token.startswith("hr_")
    listed = owner.get("/api/v1/org/tokens").json()
    assert [t["name"] for t in listed] == ["ci"]
    assert "token" not in listed[0] and listed[0]["token_prefix"] == token[:10]

    robot = make_client()
    auth = {"Authorization": f"Bearer {token}"}
    made = robot.post("/api/v1/clusters", json={"name": "via-token", "tikv_version": "8.5.0"}, headers=auth)
    assert made.status_code == 201

    revoked = owner.delete(f"/api/v1/org/tokens/{created.json()['id']}")
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    after = robot.get("/api/v1/clusters", headers=auth)
    assert after.status_code == 401


def test_token_cannot_outrank_its_creator(client: Any) -> None:
    from helpers import join_with_role

    owner = sign_up(client)
    from fastapi.testclient import TestClient

    admin = join_with_role(owner, TestClient(client.app), "admin")
    response = admin.post("/api/v1/org/tokens", json={"name": "x", "role": "owner"})
    assert response.status_code == 403


def test_validation_errors_name_the_field(client: Any) -> None:
    response = client.post(
        "/api/v1/auth/signup", json={"email": "not-an-email", "password": "short", "organization_name": "X"}
    )
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    fields = {d["field"] for d in error["details"]}
    assert fields == {"email", "password"}
    assert error["message"].startswith("Email:")


def test_unknown_fields_are_rejected(client: Any) -> None:
    response = client.post(
        "/api/v1/auth/signup",
        json={"email": "u@example.com", "password": PASSWORD, "organization_name": "U", "is_admin": True},
    )
    assert response.status_code == 422
    assert response.json()["error"]["details"][0]["field"] == "is_admin"


def test_unknown_route_uses_the_error_shape(client: Any) -> None:
    response = client.get("/api/v1/nope")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_session_expires(client: Any, clock: Any, settings: Any) -> None:
    sign_up(client)
    clock.advance(hours=settings.session_ttl_hours + 1)
    assert client.get("/api/v1/auth/me").status_code == 401
