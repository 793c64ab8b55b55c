"""Connecting an AWS account tests it before anything is imported: a passing test starts the 14-day history
import; a failing one saves the connection unhealthy with the reason, starts nothing, and the minute sweep leaves
it alone until a test passes. A server without AWS credentials of its own is told so in words."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from headroom.platform.db import session_scope
from headroom.sources.aws import service
from headroom.sources.aws.jobs import ingest_aws
from headroom.sources.models import AwsConnection
from helpers import sign_up
from test_aws_ops_api import _stubbed

ROLE = "arn:aws:iam::123456789012:role/HeadroomReadOnly"


def _backfill(owner: Any, cid: str) -> dict[str, Any]:
    return owner.get(f"/api/v1/sources/aws/{cid}/backfill").json()


def test_a_failing_test_on_save_leaves_the_connection_unhealthy_and_imports_nothing(
        client: Any, app_ctx: Any, region: str) -> None:
    owner = sign_up(client)
    clients, _ = _stubbed({"get_metric_data": "AccessDenied"})
    app_ctx.aws_clients = lambda *_a, _c=clients, **_k: _c
    created = owner.post("/api/v1/sources/aws", json={"name": "prod", "auth_kind": "assume_role",
                                                      "role_arn": ROLE, "regions": [region]})
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["test"]["ok"] is False and body["test"]["missing"] == ["cloudwatch:GetMetricData"]
    assert body["test"]["import_started"] is False
    # Unhealthy at once (a definite answer, not a blip), with the reason.
    assert body["health"]["status"] == "failing"
    assert body["health"]["last_error"] == "missing permissions: cloudwatch:GetMetricData"
    listed = owner.get("/api/v1/sources/aws").json()
    assert [c["health"]["status"] for c in listed] == ["failing"]
    assert _backfill(owner, body["id"])["state"] == "not_started"
    # An import cannot be asked for before a test passes.
    early = owner.post(f"/api/v1/sources/aws/{body['id']}/backfill", json={"days": 14})
    assert early.status_code == 409 and early.json()["error"]["code"] == "connection_not_tested"
    assert _backfill(owner, body["id"])["state"] == "not_started"

    # The role is fixed: the next test passes and starts the import.
    app_ctx.aws_clients = None  # the moto server
    passed = owner.post(f"/api/v1/sources/aws/{body['id']}/test").json()
    assert passed["ok"] is True and passed["import_started"] is True
    assert _backfill(owner, body["id"])["state"] == "queued"
    again = owner.post(f"/api/v1/sources/aws/{body['id']}/test").json()
    assert again["ok"] is True and again["import_started"] is False  # started once only
    health = owner.get(f"/api/v1/sources/aws/{body['id']}").json()["health"]
    assert health["status"] == "ok"


def test_the_minute_sweep_skips_a_connection_that_never_passed_a_test(database_url: str, settings: Any,
                                                                      region: str) -> None:
    import uuid

    from headroom.accounts.models import Organization

    with session_scope(database_url) as db:
        org = Organization(name="t", slug=f"t-{uuid.uuid4().hex[:10]}", aws_external_id=f"headroom-{uuid.uuid4().hex}")
        db.add(org)
        db.flush()
        conn = AwsConnection(org_id=org.id, name="untested", auth_kind="default_chain",
                             external_id=org.aws_external_id, regions=[region])
        db.add(conn)
        db.flush()
        cid = conn.id
    try:
        summary = ingest_aws(database_url, settings, dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC),
                             connection_id=str(cid))
        assert summary["connections"] == 0 and summary["backfills_queued"] == 0
        with session_scope(database_url) as db:
            row = db.get(AwsConnection, cid)
            assert row is not None and row.status == "unknown" and row.last_success_at is None
    finally:
        with session_scope(database_url) as db:
            db.delete(db.get(Organization, org.id))  # its connection goes with it (ON DELETE CASCADE)


@pytest.fixture()
def no_server_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """A server with no AWS credentials anywhere boto3 looks: no env keys, no ~/.aws files, no instance role."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                 "AWS_WEB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.mark.parametrize(("auth_kind", "opening"), [
    ("assume_role", "This Headroom server has no AWS credentials of its own, so it cannot assume your role: "
                    "calling sts:AssumeRole takes the server's own credentials."),
    ("default_chain", "This Headroom server has no AWS credentials: the default credential chain reads the "
                      "server's own credentials."),
])
def test_a_server_without_credentials_is_told_it_needs_its_own(client: Any, region: str, no_server_credentials: None,
                                                               auth_kind: str, opening: str) -> None:
    owner = sign_up(client)
    extra = {"role_arn": ROLE} if auth_kind == "assume_role" else {}
    body = owner.post("/api/v1/sources/aws", json={"name": auth_kind, "auth_kind": auth_kind, "regions": [region],
                                                   **extra}).json()
    error = body["test"]["error"]
    assert error == service.no_server_credentials_message(auth_kind)
    assert error.startswith(opening)
    for words in ("instance profile", "AWS_ACCESS_KEY_ID", "~/.aws/credentials",
                  "README.md, section \"The Headroom server's own AWS credentials\"",
                  "(AWS said: Unable to locate credentials.)"):
        assert words in error
    # Each failed check keeps AWS's own words; the explanation is said once, as the report's error.
    assert {(c["error_code"], c["message"]) for c in body["test"]["checks"] if not c["ok"]} == {
        ("server_has_no_credentials", "Unable to locate credentials")}
    # The sources list shows the same words, unmangled by the secret scrubber.
    listed = {c["name"]: c for c in owner.get("/api/v1/sources/aws").json()}
    assert listed[auth_kind]["health"]["last_error"] == error
    assert listed[auth_kind]["health"]["status"] == "failing"
    assert "[redacted]" not in error
    assert _backfill(owner, body["id"])["state"] == "not_started"
