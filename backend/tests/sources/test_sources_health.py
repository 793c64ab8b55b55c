"""Data sources keep secrets write-only; health probes report the database and broker."""

from __future__ import annotations

from typing import Any

from helpers import sign_up
from sqlalchemy import select


def test_aws_connection_uses_the_org_external_id_and_hides_the_secret(client: Any, db: Any) -> None:
    owner = sign_up(client)
    org = owner.get("/api/v1/org").json()
    created = owner.post(
        "/api/v1/sources/aws",
        json={"name": "keys", "auth_kind": "static_keys", "regions": ["us-east-1", "eu-west-1"],
              "access_key_id": "AKIAIOSFODNN7EXAMPLE", "secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["external_id"] == org["aws_external_id"] and body["external_id"].startswith("headroom-")
    assert body["has_secret"] is True
    assert "wJalrXUtnFEMI" not in created.text
    # Saving tests the connection (the moto server accepts any key): healthy, and its history import queued.
    assert body["health"]["status"] == "ok" and body["health"]["last_error"] is None
    assert body["test"]["ok"] is True and body["test"]["import_started"] is True
    assert "wJalrXUtnFEMI" not in str(body["test"])
    from headroom.sources.models import AwsConnection

    stored = db.scalar(select(AwsConnection).where(AwsConnection.id == body["id"]))
    assert stored.secret_access_key_enc and "wJalrXUtnFEMI" not in stored.secret_access_key_enc


def test_assume_role_needs_a_role_arn(client: Any) -> None:
    owner = sign_up(client)
    missing = owner.post("/api/v1/sources/aws", json={"name": "r", "auth_kind": "assume_role", "regions": ["us-east-1"]})
    assert missing.status_code == 422 and missing.json()["error"]["details"][0]["field"] == "role_arn"
    bad_region = owner.post("/api/v1/sources/aws", json={"name": "r", "auth_kind": "default_chain", "regions": ["mars-1"]})
    assert bad_region.status_code == 422 and bad_region.json()["error"]["details"][0]["field"].startswith("regions")


def test_prometheus_source_with_basic_auth(client: Any) -> None:
    owner = sign_up(client)
    cluster = owner.post("/api/v1/clusters", json={"name": "prod", "tikv_version": "v8.5.1"}).json()
    created = owner.post(
        "/api/v1/sources/prometheus",
        json={"name": "grafana-prom", "base_url": "https://prom.example.com/", "auth_kind": "basic",
              "username": "headroom", "secret": "hunter2-hunter2", "label_selector": 'tidb_cluster="prod"',
              "cluster_id": cluster["id"]},
    )
    assert created.status_code == 201, created.text
    assert created.json()["base_url"] == "https://prom.example.com"
    assert "hunter2" not in created.text
    switched = owner.patch(f"/api/v1/sources/prometheus/{created.json()['id']}", json={"auth_kind": "none"})
    assert switched.status_code == 200 and switched.json()["has_secret"] is False


def test_healthz_and_readyz(client: Any, app_ctx: Any, redis_url: str) -> None:
    import redis

    assert client.get("/healthz").json() == {"status": "ok"}
    from sqlalchemy import text

    def database() -> None:
        with app_ctx.sessions() as s:
            s.execute(text("SELECT 1"))

    app_ctx.ready_checks["database"] = database
    app_ctx.ready_checks["broker"] = lambda: redis.Redis.from_url(redis_url).ping()
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["checks"] == {"database": "ok", "broker": "ok"}
    app_ctx.ready_checks["broker"] = lambda: redis.Redis.from_url("redis://127.0.0.1:1/0").ping()
    down = client.get("/readyz")
    assert down.status_code == 503 and down.json()["checks"]["broker"].startswith("error")


def test_a_malformed_label_selector_is_refused_naming_the_field(client: Any) -> None:
    owner = sign_up(client)
    body = {"name": "p", "base_url": "http://prom:9090", "label_selector": 'tidb_cluster="prod'}
    response = owner.post("/api/v1/sources/prometheus", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["details"][0]["field"] == "label_selector"
    ok = owner.post("/api/v1/sources/prometheus", json={**body, "label_selector": 'tidb_cluster="prod"'})
    assert ok.status_code == 201
    bad_update = owner.patch(f"/api/v1/sources/prometheus/{ok.json()['id']}", json={"label_selector": "nope"})
    assert bad_update.status_code == 422
