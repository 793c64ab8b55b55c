"""A Prometheus URL with user:password@host: the credentials move into the encrypted basic-auth fields; the URL
stored, returned and audited never carries them; they still authenticate the fetches.
"""

from __future__ import annotations

import base64
from typing import Any

from headroom.platform.security import SecretBox
from helpers import sign_up
from local_http import fixed, serve
from sqlalchemy import select

PASSWORD = "s3cr@t-pw"  # sent percent-encoded in the URL (the @ as %40)
URL_PASSWORD = "s3cr%40t-pw"
BUILDINFO = b'{"status":"success","data":{"version":"2.53.0"}}'


def _audit_details(db: Any, org_id: str) -> str:
    from headroom.accounts.models import AuditLog

    rows = db.scalars(select(AuditLog).where(AuditLog.org_id == org_id)).all()
    return repr([(r.action, r.details) for r in rows])


def test_url_credentials_move_to_the_encrypted_fields_and_are_never_shown(client: Any, db: Any, app_ctx: Any) -> None:
    owner = sign_up(client)
    with serve(fixed(200, BUILDINFO, "application/json")) as prom:
        port = prom.url.rsplit(":", 1)[1]
        created = owner.post("/api/v1/sources/prometheus", json={
            "name": "prom", "base_url": f"http://alice:{URL_PASSWORD}@127.0.0.1:{port}", "label_selector": 'job="tikv"'})
        assert created.status_code == 201, created.text
        body = created.json()
        assert body["base_url"] == f"http://127.0.0.1:{port}"
        assert (body["auth_kind"], body["username"], body["has_secret"]) == ("basic", "alice", True)
        listed = owner.get("/api/v1/sources/prometheus")
        one = owner.get(f"/api/v1/sources/prometheus/{body['id']}")
        for text in (created.text, listed.text, one.text):
            assert "s3cr" not in text and "alice:" not in text
        assert listed.json()[0]["base_url"] == f"http://127.0.0.1:{port}"

        from headroom.sources.models import PrometheusSource

        stored = db.scalar(select(PrometheusSource).where(PrometheusSource.id == body["id"]))
        assert stored.base_url == f"http://127.0.0.1:{port}" and stored.username == "alice"
        assert stored.secret_enc and "s3cr" not in stored.secret_enc
        assert SecretBox(app_ctx.settings.secret_key).decrypt(stored.secret_enc) == PASSWORD

        # The moved credentials still authenticate: the test sends them as basic auth.
        tested = owner.post(f"/api/v1/sources/prometheus/{body['id']}/test")
        assert tested.status_code == 200, tested.text
        expected = "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
        assert prom.authorizations and set(prom.authorizations) == {expected}

        # PATCH with credentials in the URL: the same move, and the new password replaces the old.
        patched = owner.patch(f"/api/v1/sources/prometheus/{body['id']}",
                              json={"base_url": f"http://bob:other%20pw@127.0.0.1:{port}/"})
        assert patched.status_code == 200, patched.text
        assert patched.json()["base_url"] == f"http://127.0.0.1:{port}" and patched.json()["username"] == "bob"
        assert "other" not in patched.text
        db.expire_all()
        stored = db.scalar(select(PrometheusSource).where(PrometheusSource.id == body["id"]))
        assert SecretBox(app_ctx.settings.secret_key).decrypt(stored.secret_enc) == "other pw"
        assert stored.base_url == f"http://127.0.0.1:{port}"

    audit = _audit_details(db, owner.org_id)
    assert "prometheus_source.created" in audit and "prometheus_source.updated" in audit
    assert "s3cr" not in audit and "other pw" not in audit and "other%20pw" not in audit
    assert "alice:" not in audit and "bob:" not in audit


def test_url_credentials_and_auth_fields_together_are_refused_naming_base_url(client: Any) -> None:
    owner = sign_up(client)
    both = owner.post("/api/v1/sources/prometheus", json={
        "name": "prom", "base_url": "http://alice:pw-in-url@127.0.0.1:9090", "auth_kind": "bearer",
        "secret": "a-token"})
    assert both.status_code == 422, both.text
    error = both.json()["error"]
    assert error["details"][0]["field"] == "base_url" and "pw-in-url" not in both.text
    assert "username" in error["message"] and "secret" in error["message"]
    user_only = owner.post("/api/v1/sources/prometheus", json={
        "name": "prom", "base_url": "http://alice@127.0.0.1:9090"})
    assert user_only.status_code == 422, user_only.text
    assert user_only.json()["error"]["details"][0]["field"] == "base_url"
    assert owner.get("/api/v1/sources/prometheus").json() == []
