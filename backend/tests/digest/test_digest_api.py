"""The digest API (/api/v1/org/digest) through the real app, with a real SMTP server for the test send."""

from __future__ import annotations

import re
from typing import Any

import pytest
from helpers import join_with_role, sign_up
from structlog.testing import capture_logs
from xdist_workers import redis_db

SMTP_PASSWORD = "s3cret-smtp-pass"


@pytest.fixture()
def settings(smtp_server: Any, redis_url: str) -> Any:
    """The app's settings for this module: the test SMTP server with authentication."""
    from headroom.platform.settings import Settings

    return Settings(HEADROOM_ENV="test", HEADROOM_SECRET_KEY="test-secret-key-" + "x" * 32,
                    REDIS_URL=redis_db(redis_url, 5),
                    HEADROOM_SMTP_HOST="127.0.0.1", HEADROOM_SMTP_PORT=smtp_server.port,
                    HEADROOM_SMTP_SECURITY="none", HEADROOM_SMTP_USERNAME="mailer",
                    HEADROOM_SMTP_PASSWORD=SMTP_PASSWORD, HEADROOM_SMTP_FROM="Headroom <digest@headroom.example.com>",
                    HEADROOM_PUBLIC_URL="https://headroom.example.com", HEADROOM_COOKIE_SECURE=False)


def test_settings_defaults_and_update(client: Any, make_client: Any) -> None:
    owner = sign_up(client, org="Api Digest")
    got = owner.get("/api/v1/org/digest")
    assert got.status_code == 200
    assert got.json() == {"enabled": True, "include_viewers": False, "smtp_configured": True, "recipients": [],
                          "caller_email_verified": False, "last_sends": []}
    assert SMTP_PASSWORD not in got.text

    changed = owner.patch("/api/v1/org/digest", json={"include_viewers": True})
    assert changed.status_code == 200 and changed.json()["include_viewers"] is True
    assert changed.json()["enabled"] is True
    off = owner.patch("/api/v1/org/digest", json={"enabled": False})
    assert (off.json()["enabled"], off.json()["include_viewers"]) == (False, True)
    audit = owner.get("/api/v1/org/audit-log").json()
    assert "digest.settings_updated" in str(audit)

    viewer = join_with_role(owner, make_client(), "viewer")
    assert viewer.get("/api/v1/org/digest").status_code == 200
    denied = viewer.patch("/api/v1/org/digest", json={"enabled": True})
    assert denied.status_code == 403 and denied.json()["error"]["code"] == "forbidden"
    assert viewer.post("/api/v1/org/digest/send-test").status_code == 403


def test_bad_input_is_a_422_naming_the_field(client: Any) -> None:
    owner = sign_up(client)
    wrong_type = owner.patch("/api/v1/org/digest", json={"enabled": "sometimes"})
    assert wrong_type.status_code == 422
    assert [d["field"] for d in wrong_type.json()["error"]["details"]] == ["enabled"]
    unknown = owner.patch("/api/v1/org/digest", json={"recipients": ["x@example.com"]})
    assert unknown.status_code == 422
    assert [d["field"] for d in unknown.json()["error"]["details"]] == ["recipients"]


def test_preview_of_an_org_without_findings_is_all_clear(client: Any) -> None:
    owner = sign_up(client, org="Quiet <Org>")
    owner.post("/api/v1/clusters", json={"name": "calm", "tikv_version": "v8.5.1"})
    preview = owner.get("/api/v1/org/digest/preview")
    assert preview.status_code == 200
    body = preview.json()
    assert body["all_clear"] is True
    assert body["week_start"] == "2026-11-02"  # the test clock: Monday 2026-11-02 12:00 UTC
    assert body["subject"] == "Headroom weekly advisory for Quiet <Org>: all clear (week of 2026-11-02)"
    assert "All clear: no open findings on 1 cluster and every data source is healthy." in body["text"]
    assert "Quiet &lt;Org&gt;" in body["html"] and "Quiet <Org>" not in body["html"]


def test_send_test_reaches_the_caller_and_its_link_verifies_the_address(
    client: Any, make_client: Any, smtp_server: Any
) -> None:
    owner = sign_up(client, org="Test Send", email="boss@test-send.example.com")
    with capture_logs() as logs:
        sent = owner.post("/api/v1/org/digest/send-test")
    assert sent.status_code == 200, sent.text
    assert sent.json()["status"] == "sent" and sent.json()["to"] == "boss@test-send.example.com"
    assert smtp_server.logins == [("mailer", SMTP_PASSWORD)]  # authenticated with the configured account
    assert SMTP_PASSWORD not in str(logs) and SMTP_PASSWORD not in sent.text

    (received,) = smtp_server.received
    assert received.rcpt_tos == ["boss@test-send.example.com"]
    assert str(received.message["Subject"]) == ("Test send: Headroom weekly advisory for Test Send: all clear (week of 2026-11-02)")
    text = received.message.get_body(preferencelist=("plain",)).get_content()
    html = received.message.get_body(preferencelist=("html",)).get_content()
    match = re.search(r"https://headroom\.example\.com/settings/digest\?verify=([A-Za-z0-9_.-]+)", text)
    assert match is not None
    token = match.group(1)
    assert f"verify={token}" in html

    # someone else, even of the same org, cannot use the link
    admin = join_with_role(owner, make_client(), "admin")
    stolen = admin.post(f"/api/v1/org/digest/verify/{token}")
    assert stolen.status_code == 404 and stolen.json()["error"]["code"] == "not_found"
    tampered = owner.post(f"/api/v1/org/digest/verify/{token[:-2]}xx")
    assert tampered.status_code == 404

    assert owner.get("/api/v1/org/digest").json()["recipients"] == []
    verified = owner.post(f"/api/v1/org/digest/verify/{token}")
    assert verified.status_code == 200 and verified.json() == {"email": "boss@test-send.example.com", "verified": True}
    after = owner.get("/api/v1/org/digest").json()
    assert after["caller_email_verified"] is True
    assert after["recipients"] == ["boss@test-send.example.com"]


def test_send_test_reports_a_refusal(client: Any, smtp_server: Any) -> None:
    owner = sign_up(client)
    smtp_server.reply = "554 5.7.1 Message rejected"
    result = owner.post("/api/v1/org/digest/send-test")
    assert result.status_code == 200
    assert result.json()["status"] == "failed"
    assert result.json()["detail"] == "the server answered 554 5.7.1 Message rejected"
